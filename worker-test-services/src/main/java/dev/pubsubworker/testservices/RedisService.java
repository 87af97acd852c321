package dev.pubsubworker.testservices;

import java.net.URI;

/**
 * A Redis server that answered {@code PING} when it was resolved. Shared by every test in the JVM:
 * keep tests apart with key prefixes from {@link TestServices#uniqueName(String)}, never {@code
 * FLUSHALL}.
 *
 * <p>Immutable and thread-safe.
 */
public final class RedisService {

  private final URI uri;
  private final ServiceSource source;

  RedisService(URI uri, ServiceSource source) {
    this.uri = uri;
    this.source = source;
  }

  /**
   * The server's URI as Lettuce and Jedis accept it, e.g. {@code "redis://127.0.0.1:6379"}; it
   * carries the password (and {@code rediss} for TLS) when {@code REDIS_URL} did.
   */
  public String uri() {
    return uri.toString();
  }

  /** The server's host name or address. */
  public String host() {
    return uri.getHost();
  }

  /** The server's port. */
  public int port() {
    return uri.getPort() < 0 ? 6379 : uri.getPort();
  }

  /** Where this server came from. */
  public ServiceSource source() {
    return source;
  }

  /** The URI with any password masked, and the source. */
  @Override
  public String toString() {
    return "Redis " + redact(uri) + " (" + source.label() + ")";
  }

  /** {@code uri} with any password replaced by {@code ***}, for messages and reports. */
  static String redact(URI uri) {
    String userInfo = uri.getRawUserInfo();
    if (userInfo == null) {
      return uri.toString();
    }
    int colon = userInfo.indexOf(':');
    String safe = colon < 0 ? "***" : userInfo.substring(0, colon) + ":***";
    return uri.toString().replace(userInfo + "@", safe + "@");
  }
}
