package dev.pubsubworker.backend.redis;

import io.lettuce.core.RedisURI;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the {@code uri} setting into the driver's {@link RedisURI}, and describes one without its
 * credentials. No message here ever repeats the URI, since it can carry a password. Refuses the
 * forms the driver would misread: an unencoded {@code / ? #} in the password (the rest of it would
 * become path, query or fragment) and a {@code ?password=} parameter (the driver reads none).
 */
final class RedisUris {

  /** A query parameter meant to carry a secret, which Lettuce does not read. */
  private static final Pattern SECRET_PARAMETER =
      Pattern.compile(
          "(?i)(?:^|[&;])\\s*([\\w.-]*(?:password|passwd|pwd|pass|auth|secret|token|credentials?))"
              + "\\s*=");

  private RedisUris() {}

  /**
   * The driver's URI for one of the forms {@link RedisLockSettings.Builder#uri} accepts.
   *
   * @throws NullPointerException if value is null
   * @throws IllegalArgumentException naming what is wrong, never the URI itself
   */
  static RedisURI parse(String value) {
    Objects.requireNonNull(value, "uri");
    String trimmed = value.trim();
    if (trimmed.isEmpty()) {
      throw new IllegalArgumentException("uri is empty; expected e.g. redis://host:6379");
    }
    URI parsed;
    try {
      parsed = new URI(trimmed);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException(
          "uri is not a valid URI ("
              + e.getReason()
              + " at index "
              + e.getIndex()
              + "); percent-encode reserved characters in the user and password");
    }
    String scheme = parsed.getScheme() == null ? "" : parsed.getScheme().toLowerCase(Locale.ROOT);
    switch (scheme) {
      case "redis", "rediss", "redis-sentinel", "rediss-sentinel", "redis-socket" -> {}
      default ->
          throw new IllegalArgumentException(
              "uri must use redis://, rediss://, redis-sentinel:// or redis-socket://, but its"
                  + " scheme was '"
                  + scheme
                  + "'");
    }
    // A password with a raw '/', '?' or '#' ends the authority early: the rest, the password's
    // tail with the '@' and host, would be read as path, query or fragment.
    for (String part :
        new String[] {parsed.getRawPath(), parsed.getRawQuery(), parsed.getRawFragment()}) {
      if (part != null && part.contains("@")) {
        throw new IllegalArgumentException(
            "uri has an '@' after the host: percent-encode reserved characters in the user and"
                + " password (@ as %40, / as %2F, ? as %3F, # as %23)");
      }
    }
    if (parsed.getRawQuery() != null) {
      Matcher secret = SECRET_PARAMETER.matcher(parsed.getRawQuery());
      if (secret.find()) {
        throw new IllegalArgumentException(
            "uri has a '"
                + secret.group(1)
                + "' parameter, which the Redis driver ignores (it would connect without it): put"
                + " the password in the userinfo, redis://:PASSWORD@host or"
                + " redis://USER:PASSWORD@host (percent-encoded)");
      }
    }
    if ((scheme.equals("redis") || scheme.equals("rediss")) && parsed.getHost() == null) {
      throw new IllegalArgumentException(
          "uri has no valid host[:port] (a port must be a number); expected e.g."
              + " redis://host:6379");
    }
    RedisURI redis;
    try {
      redis = RedisURI.create(parsed);
    } catch (RuntimeException e) {
      // The driver's message may quote the URI (and so the password): say only what kind.
      throw new IllegalArgumentException(
          "uri is not a usable Redis URI (" + e.getClass().getSimpleName() + ")");
    }
    if (redis.getSocket() == null
        && redis.getSentinelMasterId() == null
        && (redis.getHost() == null || redis.getHost().isEmpty())) {
      throw new IllegalArgumentException("uri has no host; expected e.g. redis://host:6379");
    }
    if (redis.getDatabase() < 0) {
      throw new IllegalArgumentException(
          "uri database must be >= 0, but was " + redis.getDatabase());
    }
    return redis;
  }

  /** The endpoint without credentials, e.g. {@code redis://10.0.0.5:6379/0}. */
  static String describe(RedisURI uri) {
    String scheme =
        uri.getSocket() != null
            ? "redis-socket"
            : uri.getSentinelMasterId() != null
                ? "redis-sentinel"
                : uri.isSsl() ? "rediss" : "redis";
    String where =
        uri.getSocket() != null
            ? uri.getSocket()
            : uri.getSentinelMasterId() != null
                ? uri.getSentinels().size() + " sentinel(s), master " + uri.getSentinelMasterId()
                : uri.getHost() + ":" + uri.getPort();
    return scheme + "://" + where + "/" + uri.getDatabase();
  }
}
