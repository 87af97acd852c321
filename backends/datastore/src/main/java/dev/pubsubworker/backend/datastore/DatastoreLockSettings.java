package dev.pubsubworker.backend.datastore;

import com.google.auth.Credentials;
import dev.pubsubworker.core.DurationChecks;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.UnaryOperator;
import java.util.regex.Pattern;

/**
 * Immutable settings of a {@link DatastoreLockBackend}: where the lock entities live (project,
 * database, namespace, kind), how hard a transaction is retried, how the client connects, and the
 * clock expiry is judged on. Built with {@link #newBuilder()}; every setter validates its argument
 * and {@link Builder#build()} resolves what comes from the environment. Thread-safe (immutable).
 *
 * <p>Defaults: the project of the environment, the {@code (default)} database, the default
 * namespace, kind {@value #DEFAULT_KIND}, {@value #DEFAULT_MAX_ATTEMPTS} transaction attempts with
 * jittered exponential backoff from {@link #DEFAULT_INITIAL_BACKOFF} up to {@link
 * #DEFAULT_MAX_BACKOFF}, a {@link #DEFAULT_RPC_TIMEOUT} deadline per RPC, Application Default
 * Credentials, the system UTC clock, and an indexed {@code expiresAt}.
 */
public final class DatastoreLockSettings {

  /** The default kind of the lock entities. */
  public static final String DEFAULT_KIND = "PubsubWorkerLock";

  /** The default namespace: the empty string, Datastore's default namespace. */
  public static final String DEFAULT_NAMESPACE = "";

  /** The default database id: the empty string, the project's {@code (default)} database. */
  public static final String DEFAULT_DATABASE_ID = "";

  /** The default retry budget: attempts per verb, the first one included. */
  public static final int DEFAULT_MAX_ATTEMPTS = 6;

  /** The default wait before the second attempt (before jitter); it doubles per attempt. */
  public static final Duration DEFAULT_INITIAL_BACKOFF = Duration.ofMillis(20);

  /** The default cap of the wait between two attempts (before jitter). */
  public static final Duration DEFAULT_MAX_BACKOFF = Duration.ofSeconds(1);

  /** The default deadline of each RPC. */
  public static final Duration DEFAULT_RPC_TIMEOUT = Duration.ofSeconds(10);

  /** The default of {@link #indexExpiresAt()}: true, {@code expiresAt} is indexed. */
  public static final boolean DEFAULT_INDEX_EXPIRES_AT = true;

  /**
   * The longest {@code initialBackoff} or {@code maxBackoff} accepted: one hour. A longer wait
   * between two attempts of one verb is a mistake (a unit confused), not a setting.
   */
  public static final Duration MAX_BACKOFF_LIMIT = Duration.ofHours(1);

  /** The environment variable read when no emulator host is set: {@value}. */
  public static final String EMULATOR_HOST_ENV = "DATASTORE_EMULATOR_HOST";

  private static final int MAX_KIND_BYTES = 1500;
  private static final Pattern NAMESPACE = Pattern.compile("[0-9A-Za-z._-]{0,100}");
  private static final Pattern DATABASE_ID = Pattern.compile("[a-z][a-z0-9-]{2,61}[a-z0-9]");
  private static final Pattern RESERVED = Pattern.compile("__.*__", Pattern.DOTALL);

  private final String projectId;
  private final String databaseId;
  private final String namespace;
  private final String kind;
  private final int maxAttempts;
  private final Duration initialBackoff;
  private final Duration maxBackoff;
  private final Duration rpcTimeout;
  private final String emulatorHost;
  private final Credentials credentials;
  private final Clock clock;
  private final boolean indexExpiresAt;

  private DatastoreLockSettings(Builder b, String emulatorHost) {
    this.projectId = b.projectId;
    this.databaseId = b.databaseId;
    this.namespace = b.namespace;
    this.kind = b.kind;
    this.maxAttempts = b.maxAttempts;
    this.initialBackoff = b.initialBackoff;
    this.maxBackoff = b.maxBackoff;
    this.rpcTimeout = b.rpcTimeout;
    this.emulatorHost = emulatorHost;
    this.credentials = b.credentials;
    this.clock = b.clock;
    this.indexExpiresAt = b.indexExpiresAt;
  }

  /** A builder with every default. */
  public static Builder newBuilder() {
    return new Builder();
  }

  /** A builder holding these settings, to derive others from them. */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.projectId = projectId;
    b.databaseId = databaseId;
    b.namespace = namespace;
    b.kind = kind;
    b.maxAttempts = maxAttempts;
    b.initialBackoff = initialBackoff;
    b.maxBackoff = maxBackoff;
    b.rpcTimeout = rpcTimeout;
    b.emulatorHost = emulatorHost;
    b.credentials = credentials;
    b.clock = clock;
    b.indexExpiresAt = indexExpiresAt;
    return b;
  }

  /**
   * The project id, or {@code null} to let the client discover it from the environment ({@code
   * DATASTORE_PROJECT_ID}, {@code GOOGLE_CLOUD_PROJECT}, the credentials, the metadata server).
   */
  public String projectId() {
    return projectId;
  }

  /** The database id; the empty string is the project's {@code (default)} database. */
  public String databaseId() {
    return databaseId;
  }

  /** The namespace; the empty string is the default namespace. */
  public String namespace() {
    return namespace;
  }

  /** The kind of the lock entities. */
  public String kind() {
    return kind;
  }

  /** The retry budget: how many times a verb's transaction is attempted, the first included. */
  public int maxAttempts() {
    return maxAttempts;
  }

  /** The wait before the second attempt, before jitter; it doubles per attempt. */
  public Duration initialBackoff() {
    return initialBackoff;
  }

  /** The longest wait between two attempts, before jitter. */
  public Duration maxBackoff() {
    return maxBackoff;
  }

  /** The deadline of each RPC. */
  public Duration rpcTimeout() {
    return rpcTimeout;
  }

  /**
   * The emulator's {@code host:port} (set explicitly or read from {@value #EMULATOR_HOST_ENV} when
   * the settings were built), if any. With an emulator the client connects in plain text without
   * credentials.
   */
  public Optional<String> emulatorHost() {
    return Optional.ofNullable(emulatorHost);
  }

  /** The credentials set explicitly; empty means Application Default Credentials. */
  public Optional<Credentials> credentials() {
    return Optional.ofNullable(credentials);
  }

  /** The clock leases and windows are judged on. */
  public Clock clock() {
    return clock;
  }

  /**
   * Whether {@code expiresAt} is indexed (so {@link DatastoreLockBackend#purgeExpired} runs one
   * keys-only query); when false it scans the kind instead.
   */
  public boolean indexExpiresAt() {
    return indexExpiresAt;
  }

  @Override
  public String toString() {
    return "DatastoreLockSettings{projectId="
        + projectId
        + ", databaseId='"
        + databaseId
        + "', namespace='"
        + namespace
        + "', kind='"
        + kind
        + "', maxAttempts="
        + maxAttempts
        + ", initialBackoff="
        + initialBackoff
        + ", maxBackoff="
        + maxBackoff
        + ", rpcTimeout="
        + rpcTimeout
        + ", emulatorHost="
        + emulatorHost
        + ", credentials="
        + (credentials == null ? "ADC" : "explicit")
        + ", clock="
        + clock
        + ", indexExpiresAt="
        + indexExpiresAt
        + '}';
  }

  /**
   * Builds {@link DatastoreLockSettings}. Each setter rejects a bad value at once with an {@link
   * IllegalArgumentException} that says what was wrong and what was given. Not thread-safe.
   */
  public static final class Builder {
    private String projectId;
    private String databaseId = DEFAULT_DATABASE_ID;
    private String namespace = DEFAULT_NAMESPACE;
    private String kind = DEFAULT_KIND;
    private int maxAttempts = DEFAULT_MAX_ATTEMPTS;
    private Duration initialBackoff = DEFAULT_INITIAL_BACKOFF;
    private Duration maxBackoff = DEFAULT_MAX_BACKOFF;
    private Duration rpcTimeout = DEFAULT_RPC_TIMEOUT;
    private String emulatorHost;
    private Credentials credentials;
    private Clock clock = Clock.systemUTC();
    private boolean indexExpiresAt = DEFAULT_INDEX_EXPIRES_AT;
    private UnaryOperator<String> environment = System::getenv;

    private Builder() {}

    /**
     * The Google Cloud project. Default: discovered by the client from the environment.
     *
     * @throws IllegalArgumentException if blank
     */
    public Builder projectId(String value) {
      Objects.requireNonNull(value, "projectId");
      if (value.isBlank()) {
        throw new IllegalArgumentException("projectId must not be blank");
      }
      this.projectId = value;
      return this;
    }

    /**
     * The Firestore database (in Datastore mode). Default: {@value #DEFAULT_DATABASE_ID} (the empty
     * string), the {@code (default)} database; {@code "(default)"} is accepted as a synonym.
     *
     * @throws IllegalArgumentException unless 4 to 63 lowercase letters, digits or hyphens,
     *     starting with a letter and ending with a letter or digit
     */
    public Builder databaseId(String value) {
      Objects.requireNonNull(value, "databaseId");
      if (value.isEmpty() || value.equals("(default)")) {
        this.databaseId = DEFAULT_DATABASE_ID;
        return this;
      }
      if (!DATABASE_ID.matcher(value).matches()) {
        throw new IllegalArgumentException(
            "databaseId must be 4 to 63 of [a-z0-9-], starting with a letter and ending with a"
                + " letter or digit, but was '"
                + value
                + "'");
      }
      this.databaseId = value;
      return this;
    }

    /**
     * The namespace of the lock entities. Default: {@value #DEFAULT_NAMESPACE} (the empty string),
     * the default namespace.
     *
     * @throws IllegalArgumentException unless at most 100 of {@code [0-9A-Za-z._-]} and not of the
     *     reserved form {@code __*__}
     */
    public Builder namespace(String value) {
      Objects.requireNonNull(value, "namespace");
      if (!NAMESPACE.matcher(value).matches() || RESERVED.matcher(value).matches()) {
        throw new IllegalArgumentException(
            "namespace must be at most 100 of [0-9A-Za-z._-] and not of the reserved form __*__,"
                + " but was '"
                + value
                + "'");
      }
      this.namespace = value;
      return this;
    }

    /**
     * The kind of the lock entities. Default: {@value #DEFAULT_KIND}. Give each deployment that
     * must not share keys its own kind or namespace.
     *
     * @throws IllegalArgumentException if empty, longer than 1,500 UTF-8 bytes, or of the reserved
     *     form {@code __*__}
     */
    public Builder kind(String value) {
      Objects.requireNonNull(value, "kind");
      int bytes = value.getBytes(StandardCharsets.UTF_8).length;
      if (value.isEmpty() || bytes > MAX_KIND_BYTES || RESERVED.matcher(value).matches()) {
        throw new IllegalArgumentException(
            "kind must be 1 to 1,500 UTF-8 bytes and not of the reserved form __*__, but was '"
                + value
                + "'");
      }
      this.kind = value;
      return this;
    }

    /**
     * The retry budget: how many times one verb's transaction is attempted (the first attempt
     * included) when it meets contention (ABORTED) or a transient failure (UNAVAILABLE,
     * DEADLINE_EXCEEDED, INTERNAL, RESOURCE_EXHAUSTED). Default: {@value #DEFAULT_MAX_ATTEMPTS}.
     *
     * @throws IllegalArgumentException if below 1 or above 100
     */
    public Builder maxAttempts(int value) {
      if (value < 1 || value > 100) {
        throw new IllegalArgumentException("maxAttempts must be 1 to 100, but was " + value);
      }
      this.maxAttempts = value;
      return this;
    }

    /**
     * The wait before the second attempt; it doubles per attempt up to {@link
     * #maxBackoff(Duration)}, and each wait is drawn uniformly between half and all of it (jitter).
     * Default: {@link #DEFAULT_INITIAL_BACKOFF}.
     *
     * @throws IllegalArgumentException if negative or longer than {@link #MAX_BACKOFF_LIMIT}
     */
    public Builder initialBackoff(Duration value) {
      this.initialBackoff =
          DurationChecks.requireBetween("initialBackoff", value, Duration.ZERO, MAX_BACKOFF_LIMIT);
      return this;
    }

    /**
     * The longest wait between two attempts, before jitter. Default: {@link #DEFAULT_MAX_BACKOFF}.
     *
     * @throws IllegalArgumentException if negative or longer than {@link #MAX_BACKOFF_LIMIT}
     */
    public Builder maxBackoff(Duration value) {
      this.maxBackoff =
          DurationChecks.requireBetween("maxBackoff", value, Duration.ZERO, MAX_BACKOFF_LIMIT);
      return this;
    }

    /**
     * The deadline of each RPC (lookup, begin, commit, rollback, query); one that passes it fails
     * with DEADLINE_EXCEEDED and counts against the retry budget. Default: {@link
     * #DEFAULT_RPC_TIMEOUT}.
     *
     * @throws IllegalArgumentException if shorter than one millisecond
     */
    public Builder rpcTimeout(Duration value) {
      this.rpcTimeout = DurationChecks.requireAtLeastOneMilli("rpcTimeout", value);
      return this;
    }

    /**
     * Connects to an emulator at {@code host:port} in plain text, without credentials. Default: the
     * value of {@value #EMULATOR_HOST_ENV} when {@link #build()} runs, else none (production).
     *
     * @throws IllegalArgumentException if not of the form {@code host:port}
     */
    public Builder emulatorHost(String value) {
      Objects.requireNonNull(value, "emulatorHost");
      this.emulatorHost = requireHostPort(value, "emulatorHost");
      return this;
    }

    /**
     * Explicit credentials. Default: Application Default Credentials (on GKE, the workload identity
     * of the pod). Ignored when connecting to an emulator.
     */
    public Builder credentials(Credentials value) {
      this.credentials = Objects.requireNonNull(value, "credentials");
      return this;
    }

    /**
     * The clock leases and windows are judged on. Default: {@link Clock#systemUTC()}. Every worker
     * sharing the kind should run on a synchronised clock; see the module README for the skew this
     * tolerates.
     */
    public Builder clock(Clock value) {
      this.clock = Objects.requireNonNull(value, "clock");
      return this;
    }

    /**
     * Whether to index {@code expiresAt}, the only indexed property. Default: {@value
     * #DEFAULT_INDEX_EXPIRES_AT}, so {@link DatastoreLockBackend#purgeExpired} is one keys-only
     * query. Above roughly 500 claims per second, an index on a near-monotonic timestamp can become
     * a write hotspot: turn it off, rely on a TTL policy, and {@code purgeExpired} scans the kind
     * instead.
     */
    public Builder indexExpiresAt(boolean value) {
      this.indexExpiresAt = value;
      return this;
    }

    /** Where environment variables are read from; tests only. */
    Builder environment(UnaryOperator<String> value) {
      this.environment = Objects.requireNonNull(value, "environment");
      return this;
    }

    /**
     * Builds the settings, reading {@value #EMULATOR_HOST_ENV} if no emulator host was set.
     *
     * @throws IllegalArgumentException if {@code maxBackoff} is shorter than {@code
     *     initialBackoff}, or {@value #EMULATOR_HOST_ENV} is set but not {@code host:port}
     */
    public DatastoreLockSettings build() {
      if (maxBackoff.compareTo(initialBackoff) < 0) {
        throw new IllegalArgumentException(
            "maxBackoff ("
                + maxBackoff
                + ") must not be shorter than initialBackoff ("
                + initialBackoff
                + ")");
      }
      String host = emulatorHost;
      if (host == null) {
        String fromEnv = environment.apply(EMULATOR_HOST_ENV);
        if (fromEnv != null && !fromEnv.isBlank()) {
          host = requireHostPort(fromEnv.trim(), EMULATOR_HOST_ENV);
        }
      }
      return new DatastoreLockSettings(this, host);
    }

    private static String requireHostPort(String value, String name) {
      String v = value.startsWith("http://") ? value.substring("http://".length()) : value;
      int colon = v.lastIndexOf(':');
      boolean ok = colon > 0 && colon < v.length() - 1;
      if (ok) {
        try {
          int port = Integer.parseInt(v.substring(colon + 1));
          ok = port > 0 && port < 65536;
        } catch (NumberFormatException e) {
          ok = false;
        }
      }
      if (!ok) {
        throw new IllegalArgumentException(name + " must be host:port, but was '" + value + "'");
      }
      return v;
    }
  }
}
