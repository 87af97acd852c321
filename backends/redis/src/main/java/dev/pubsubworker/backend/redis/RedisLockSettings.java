package dev.pubsubworker.backend.redis;

import dev.pubsubworker.core.DurationChecks;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;
import io.lettuce.core.resource.ClientResources;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * How a {@link RedisLockBackend} reaches Redis and lays out its records. Immutable and thread-safe;
 * built with {@link #newBuilder()}, whose setters validate their argument at once and whose {@link
 * Builder#build()} checks the combination. Every error message says what was wrong and, except for
 * the URI (which can carry a password), what was given.
 *
 * <pre>{@code
 * RedisLockSettings settings =
 *     RedisLockSettings.newBuilder()
 *         .uri("rediss://worker:s3cret@redis.internal:6380/0")
 *         .keyPrefix("orders:lock:")
 *         .commandTimeout(Duration.ofSeconds(2))
 *         .build();
 * }</pre>
 *
 * <p>A record lives at the Redis key {@code keyPrefix + key}, or {@code keyPrefix + "{" + hashTag +
 * "}" + key} when a {@linkplain Builder#hashTag hash tag} is set, with the lock key encoded as
 * UTF-8.
 */
public final class RedisLockSettings {

  /** Default URI: a Redis on this host's default port, {@value}. */
  public static final String DEFAULT_URI = "redis://127.0.0.1:6379";

  /** Default key prefix: {@value}. */
  public static final String DEFAULT_KEY_PREFIX = "pubsub-worker:lock:";

  /** Default command timeout: 5 seconds. */
  public static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(5);

  /** Default connect timeout: 5 seconds. */
  public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(5);

  /** Default client name shown by {@code CLIENT LIST}: {@value}. */
  public static final String DEFAULT_CLIENT_NAME = "pubsub-worker";

  /** Longest key prefix accepted, in characters. */
  public static final int MAX_PREFIX_LENGTH = 256;

  /** Longest hash tag accepted, in characters. */
  public static final int MAX_HASH_TAG_LENGTH = 64;

  /** Longest client name accepted, in characters. */
  public static final int MAX_CLIENT_NAME_LENGTH = 128;

  private static final Duration MAX_TIMEOUT = Duration.ofMinutes(10);

  private final RedisURI redisUri;
  private final boolean cluster;
  private final String keyPrefix;
  private final String hashTag;
  private final Duration commandTimeout;
  private final Duration connectTimeout;
  private final String clientName;
  private final SslOptions sslOptions;
  private final ClientResources clientResources;
  private final LongSupplier clockOffset;

  private RedisLockSettings(Builder b) {
    this.redisUri = b.redisUri;
    this.cluster = b.cluster;
    this.keyPrefix = b.keyPrefix;
    this.hashTag = b.hashTag;
    this.commandTimeout = b.commandTimeout;
    this.connectTimeout = b.connectTimeout;
    this.clientName = b.clientName;
    this.sslOptions = b.sslOptions;
    this.clientResources = b.clientResources;
    this.clockOffset = b.clockOffset;
  }

  /** A builder with every setting at its default. */
  public static Builder newBuilder() {
    return new Builder();
  }

  /** A builder holding this object's settings. */
  public Builder toBuilder() {
    return new Builder(this);
  }

  /** The key prefix every record's Redis key starts with. */
  public String keyPrefix() {
    return keyPrefix;
  }

  /** The Redis Cluster hash tag put between the prefix and the key, if any. */
  public Optional<String> hashTag() {
    return Optional.ofNullable(hashTag);
  }

  /** How long one command (one verb's script) may take before it fails. */
  public Duration commandTimeout() {
    return commandTimeout;
  }

  /** How long opening the connection may take. */
  public Duration connectTimeout() {
    return connectTimeout;
  }

  /** The connection's name in {@code CLIENT LIST}. */
  public String clientName() {
    return clientName;
  }

  /** Whether the backend connects to a Redis Cluster through the URI's seed node. */
  public boolean cluster() {
    return cluster;
  }

  /** Whether the connection uses TLS ({@code rediss://}). */
  public boolean tls() {
    return redisUri.isSsl();
  }

  /** The Redis endpoint without credentials, e.g. {@code redis://10.0.0.5:6379/0}, for logs. */
  public String endpoint() {
    return cluster ? "cluster seed " + RedisUris.describe(redisUri) : RedisUris.describe(redisUri);
  }

  /** The driver's URI, credentials included: for the backend only. */
  RedisURI redisUri() {
    return redisUri;
  }

  /** The prefix and hash tag as Redis sees them, e.g. {@code orders:{locks}}. */
  String namespace() {
    return hashTag == null ? keyPrefix : keyPrefix + "{" + hashTag + "}";
  }

  Optional<SslOptions> sslOptions() {
    return Optional.ofNullable(sslOptions);
  }

  Optional<ClientResources> clientResources() {
    return Optional.ofNullable(clientResources);
  }

  LongSupplier clockOffset() {
    return clockOffset;
  }

  @Override
  public String toString() {
    return "RedisLockSettings{endpoint="
        + endpoint()
        + ", keyPrefix='"
        + keyPrefix
        + "', hashTag="
        + (hashTag == null ? "none" : "'" + hashTag + "'")
        + ", commandTimeout="
        + commandTimeout
        + ", connectTimeout="
        + connectTimeout
        + ", clientName='"
        + clientName
        + "', tls="
        + tls()
        + ", cluster="
        + cluster
        + "}";
  }

  /**
   * Builds {@link RedisLockSettings}. Each setter checks its argument and throws {@link
   * IllegalArgumentException} (or {@link NullPointerException} for null) naming the setting and the
   * problem. Not thread-safe.
   */
  public static final class Builder {

    private RedisURI redisUri = RedisURI.create(DEFAULT_URI);
    private boolean cluster;
    private String keyPrefix = DEFAULT_KEY_PREFIX;
    private String hashTag;
    private Duration commandTimeout = DEFAULT_COMMAND_TIMEOUT;
    private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
    private String clientName = DEFAULT_CLIENT_NAME;
    private SslOptions sslOptions;
    private ClientResources clientResources;
    private LongSupplier clockOffset = () -> 0L;

    private Builder() {}

    private Builder(RedisLockSettings s) {
      this.redisUri = s.redisUri;
      this.cluster = s.cluster;
      this.keyPrefix = s.keyPrefix;
      this.hashTag = s.hashTag;
      this.commandTimeout = s.commandTimeout;
      this.connectTimeout = s.connectTimeout;
      this.clientName = s.clientName;
      this.sslOptions = s.sslOptions;
      this.clientResources = s.clientResources;
      this.clockOffset = s.clockOffset;
    }

    /**
     * Where Redis is, and how to authenticate. Default {@value #DEFAULT_URI}. Accepted forms:
     *
     * <ul>
     *   <li>{@code redis://[[user]:password@]host[:port][/database]} — plain TCP; with a password
     *       only ({@code redis://:secret@host}) Redis's default user, with both an ACL user;
     *   <li>{@code rediss://...} — the same over TLS, verifying the server's certificate against
     *       the JVM's trust store unless {@link #sslOptions} says otherwise;
     *   <li>{@code redis-sentinel://[password@]host[:port][,host2[:port2]][/database]#masterName} —
     *       the current master found through Sentinel;
     *   <li>{@code redis-socket:///path/to/redis.sock} — a Unix domain socket.
     * </ul>
     *
     * Percent-encode reserved characters in the user or password. A timeout or client name in the
     * URI is overridden by {@link #commandTimeout} and {@link #clientName}.
     *
     * @throws IllegalArgumentException if the URI cannot be parsed or has another scheme; the
     *     message never repeats the URI, since it can carry a password
     */
    public Builder uri(String value) {
      this.redisUri = RedisUris.parse(value);
      return this;
    }

    /**
     * Whether {@link #uri} names a seed node of a Redis Cluster rather than a standalone (or
     * Sentinel-managed) server. Default false. With true, the backend discovers the cluster's
     * topology from the seed, sends each script to the node owning its key's slot, follows
     * resharding ({@code MOVED}/{@code ASK}) and refreshes the topology every minute. Only {@code
     * redis://} and {@code rediss://} seeds, database 0.
     */
    public Builder cluster(boolean value) {
      this.cluster = value;
      return this;
    }

    /**
     * The prefix of every record's Redis key. Default {@value #DEFAULT_KEY_PREFIX}. Give each
     * application (or environment sharing a Redis) its own prefix: {@link
     * RedisLockBackend#purgeExpired} scans this prefix only.
     *
     * @param value 1 to {@value #MAX_PREFIX_LENGTH} printable ASCII characters, without spaces and
     *     without braces (use {@link #hashTag} for a Redis Cluster hash tag)
     */
    public Builder keyPrefix(String value) {
      this.keyPrefix = requirePrintable(value, "keyPrefix", MAX_PREFIX_LENGTH);
      return this;
    }

    /**
     * A Redis Cluster hash tag put between the prefix and the key ({@code prefix{tag}key}), so that
     * every record of this backend hashes to one slot, on one node. Default none: records spread
     * over the cluster by their own key, which is what most deployments want; each script touches
     * exactly one record, so either layout is cluster-safe. Co-locate when you want one node's
     * {@code SCAN} to see every record or to keep the locks apart from a busy keyspace.
     *
     * @param value 1 to {@value #MAX_HASH_TAG_LENGTH} printable ASCII characters, without spaces or
     *     braces; or {@code null} for none
     */
    public Builder hashTag(String value) {
      this.hashTag = value == null ? null : requirePrintable(value, "hashTag", MAX_HASH_TAG_LENGTH);
      return this;
    }

    /**
     * How long one command may take before the verb fails with a {@link
     * dev.pubsubworker.core.LockBackendException}. Default 5 s. Keep it well below the guard's
     * lease.
     *
     * @throws IllegalArgumentException unless between 1 ms and 10 min
     */
    public Builder commandTimeout(Duration value) {
      this.commandTimeout = requireTimeout(value, "commandTimeout");
      return this;
    }

    /**
     * How long opening the TCP (and TLS) connection may take. Default 5 s.
     *
     * @throws IllegalArgumentException unless between 1 ms and 10 min
     */
    public Builder connectTimeout(Duration value) {
      this.connectTimeout = requireTimeout(value, "connectTimeout");
      return this;
    }

    /**
     * The name the connection registers with {@code CLIENT SETNAME}, as shown by {@code CLIENT
     * LIST}. Default {@value #DEFAULT_CLIENT_NAME}.
     *
     * @param value 1 to {@value #MAX_CLIENT_NAME_LENGTH} printable ASCII characters without spaces
     */
    public Builder clientName(String value) {
      Objects.requireNonNull(value, "clientName");
      if (value.isEmpty() || value.length() > MAX_CLIENT_NAME_LENGTH) {
        throw new IllegalArgumentException(
            "clientName must be 1 to "
                + MAX_CLIENT_NAME_LENGTH
                + " characters, but was "
                + value.length());
      }
      requireNoSpaceOrControl(value, "clientName");
      this.clientName = value;
      return this;
    }

    /**
     * TLS details for a {@code rediss://} URI: a trust store with your server's CA (Google Cloud
     * Memorystore's server CA, say), a client certificate, protocols. Default: the JVM's trust
     * store and Lettuce's defaults.
     *
     * @param value the options, or {@code null} for the default
     */
    public Builder sslOptions(SslOptions value) {
      this.sslOptions = value;
      return this;
    }

    /**
     * Lettuce client resources (event loops, timers) to share with other Redis clients of the
     * process. The backend uses them but never shuts them down. Default: the backend creates its
     * own and shuts them down on {@link RedisLockBackend#close()}.
     *
     * @param value the resources, or {@code null} for the backend's own
     */
    public Builder clientResources(ClientResources value) {
      this.clientResources = value;
      return this;
    }

    /**
     * Tests in this package only: milliseconds added to Redis's {@code TIME} inside every script,
     * read at each call, so a test can move the backend's clock forward without sleeping. Default:
     * zero. Not public: every instance sharing a store must see the same clock.
     *
     * @param value read on every verb; must not decrease
     */
    Builder clockOffset(LongSupplier value) {
      this.clockOffset = Objects.requireNonNull(value, "clockOffset");
      return this;
    }

    /**
     * Checks the combination and builds the settings.
     *
     * @throws IllegalArgumentException if {@link #sslOptions} is set for a URI without TLS, or
     *     {@link #cluster} is on with a Sentinel or socket URI or a database other than 0
     */
    public RedisLockSettings build() {
      if (cluster
          && (redisUri.getSocket() != null
              || redisUri.getSentinelMasterId() != null
              || redisUri.getDatabase() != 0)) {
        throw new IllegalArgumentException(
            "cluster mode needs a redis:// or rediss:// seed node uri with database 0");
      }
      if (sslOptions != null && !redisUri.isSsl()) {
        throw new IllegalArgumentException(
            "sslOptions are set but the uri does not use TLS; use a rediss:// uri");
      }
      return new RedisLockSettings(this);
    }

    private static String requirePrintable(String value, String name, int maxLength) {
      Objects.requireNonNull(value, name);
      if (value.isEmpty() || value.length() > maxLength) {
        throw new IllegalArgumentException(
            name + " must be 1 to " + maxLength + " characters, but was " + value.length());
      }
      requireNoSpaceOrControl(value, name);
      for (int i = 0; i < value.length(); i++) {
        char c = value.charAt(i);
        if (c == '{' || c == '}') {
          throw new IllegalArgumentException(
              name
                  + " must not contain braces ('"
                  + c
                  + "' at index "
                  + i
                  + "); set a Redis Cluster hash tag with hashTag(...)");
        }
      }
      return value;
    }

    private static void requireNoSpaceOrControl(String value, String name) {
      for (int i = 0; i < value.length(); i++) {
        char c = value.charAt(i);
        if (c < 0x21 || c > 0x7e) {
          throw new IllegalArgumentException(
              name
                  + " must be printable ASCII without spaces, but has U+"
                  + String.format("%04X", (int) c)
                  + " at index "
                  + i);
        }
      }
    }

    private static Duration requireTimeout(Duration value, String name) {
      DurationChecks.requireAtLeastOneMilli(name, value);
      return DurationChecks.requireBetween(name, value, Duration.ofMillis(1), MAX_TIMEOUT);
    }
  }
}
