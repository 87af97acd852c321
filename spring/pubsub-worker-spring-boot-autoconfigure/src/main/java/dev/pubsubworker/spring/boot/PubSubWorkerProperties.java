package dev.pubsubworker.spring.boot;

import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.pubsub.GuardMode;
import dev.pubsubworker.pubsub.GuardedReceiver;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.validation.Errors;
import org.springframework.validation.Validator;

/**
 * The {@code pubsub-worker.*} settings of a Spring Boot application: where the lock store is
 * ({@code lock-store}), how each guarded subscription runs ({@code subscriptions.<id>}), the
 * graceful stop and the health probe. Every setting states its default; IDEs complete them from the
 * configuration metadata this module ships.
 *
 * <pre>{@code
 * pubsub-worker:
 *   lock-store:
 *     type: redis
 *     redis.uri: rediss://default:${REDIS_AUTH}@10.0.0.3:6378
 *   subscriptions:
 *     orders:
 *       subscription: orders-sub
 *       key: attribute:order_id
 *       dead-letter-topic: orders-dead
 * }</pre>
 *
 * <p>The settings validate themselves when bound: every problem is reported at start-up, one line
 * each with the property's name. Durations follow Spring Boot's rules ({@code 30s}, {@code 2m}); a
 * bare number is milliseconds, so the guard's durations must be at least a second. Settings a lock
 * store's own module checks (a Redis URI, a table name) are checked when the store is created, and
 * reported the same way, naming the property.
 */
@ConfigurationProperties(prefix = PubSubWorkerProperties.PREFIX)
public class PubSubWorkerProperties implements Validator {

  /** The prefix of every setting: {@value}. */
  public static final String PREFIX = "pubsub-worker";

  /** The shortest lease and ttl accepted: 1 second (a bare number is milliseconds in Boot). */
  static final Duration MIN_GUARD_DURATION = Duration.ofSeconds(1);

  /** Where the lock records live. */
  @NestedConfigurationProperty private final LockStore lockStore = new LockStore();

  /**
   * The guarded subscriptions, by id: the id names the subscription in code
   * (GuardedSubscriptions.subscribe("orders", handler)), in metrics and logs, and is the default of
   * its Pub/Sub subscription name and its key namespace.
   */
  private final Map<String, Subscription> subscriptions = new LinkedHashMap<>();

  /**
   * Who dead-letters, as dead letters say (attribute pubsub-worker-worker-id). Default: the
   * HOSTNAME environment variable (a pod's name on Kubernetes), else the host's name.
   */
  private @Nullable String workerId;

  /**
   * How long running handlers get to finish when the application stops, before they are abandoned
   * (claim released, thread interrupted, message nacked). The stop takes at most this plus 10s (5s
   * to release claims, 5s for the subscribers and dead-letter publishers to flush), which must fit
   * in spring.lifecycle.timeout-per-shutdown-phase (Boot's default 30s).
   */
  private Duration shutdownGrace = Duration.ofSeconds(20);

  /** The health indicator's probe of the lock store. */
  @NestedConfigurationProperty private final Health health = new Health();

  public LockStore getLockStore() {
    return lockStore;
  }

  public Map<String, Subscription> getSubscriptions() {
    return subscriptions;
  }

  public @Nullable String getWorkerId() {
    return workerId;
  }

  public void setWorkerId(@Nullable String workerId) {
    this.workerId = workerId;
  }

  public Duration getShutdownGrace() {
    return shutdownGrace;
  }

  public void setShutdownGrace(Duration shutdownGrace) {
    this.shutdownGrace = shutdownGrace;
  }

  public Health getHealth() {
    return health;
  }

  @Override
  public boolean supports(Class<?> type) {
    return PubSubWorkerProperties.class.isAssignableFrom(type);
  }

  /**
   * Checks what no lock store module checks: each subscription's key, namespace, durations and
   * poison exceptions, the stop's grace and the probe's timing. Each problem is one error on its
   * property.
   */
  @Override
  public void validate(Object target, Errors errors) {
    PubSubWorkerProperties p = (PubSubWorkerProperties) target;
    if (!positive(p.shutdownGrace)) {
      errors.rejectValue("shutdownGrace", "invalid", "must be positive");
    }
    if (p.workerId != null && p.workerId.isEmpty()) {
      errors.rejectValue("workerId", "invalid", "must not be empty (leave it out for the default)");
    }
    Health h = p.health;
    if (h.lockStoreProbeInterval.compareTo(Duration.ofMillis(100)) < 0) {
      errors.rejectValue("health.lockStoreProbeInterval", "invalid", "must be at least 100ms");
    } else if (h.lockStoreStaleAfter.compareTo(h.lockStoreProbeInterval) <= 0) {
      errors.rejectValue(
          "health.lockStoreStaleAfter",
          "invalid",
          "must be longer than lock-store-probe-interval (" + h.lockStoreProbeInterval + ")");
    }
    p.subscriptions.forEach((id, s) -> s.validate("subscriptions[" + id + "].", id, errors));
  }

  private static boolean positive(@Nullable Duration d) {
    return d != null && !d.isZero() && !d.isNegative();
  }

  /** The kinds of lock store. */
  public enum LockStoreType {
    /** Redis or Memorystore ({@code worker-backend-redis}). */
    REDIS,
    /** PostgreSQL, MySQL/MariaDB or H2 ({@code worker-backend-sql}). */
    SQL,
    /** Firestore in Datastore mode ({@code worker-backend-datastore}). */
    DATASTORE,
    /**
     * This process's memory: keys are not shared with other instances and are lost at a restart.
     * For tests and single-instance tools only.
     */
    IN_MEMORY
  }

  /** {@code pubsub-worker.lock-store}. */
  public static class LockStore {

    /**
     * The kind of lock store: redis, sql, datastore or in-memory. No default: the store decides
     * what "exactly once" spans (in-memory spans one process only). Not needed when the application
     * defines its own LockBackend bean.
     */
    private @Nullable LockStoreType type;

    /** type = redis. */
    @NestedConfigurationProperty private final Redis redis = new Redis();

    /** type = sql. */
    @NestedConfigurationProperty private final Sql sql = new Sql();

    /** type = datastore. */
    @NestedConfigurationProperty private final Datastore datastore = new Datastore();

    public @Nullable LockStoreType getType() {
      return type;
    }

    public void setType(@Nullable LockStoreType type) {
      this.type = type;
    }

    public Redis getRedis() {
      return redis;
    }

    public Sql getSql() {
      return sql;
    }

    public Datastore getDatastore() {
      return datastore;
    }
  }

  /** {@code pubsub-worker.lock-store.redis}: the settings of {@code RedisLockSettings}. */
  public static class Redis {

    /**
     * Where Redis is, and how to authenticate: redis://[[user]:password@]host[:port][/database],
     * rediss:// for TLS, redis-sentinel://...#master, redis-socket:///path. Default
     * redis://127.0.0.1:6379. Never logged.
     */
    private @Nullable String uri;

    /** Whether the URI names a seed node of a Redis Cluster. Default false. */
    private boolean cluster;

    /** The prefix of every record's Redis key. Default pubsub-worker:lock:. */
    private @Nullable String keyPrefix;

    /** A Redis Cluster hash tag between the prefix and the key, prefix{tag}key. */
    private @Nullable String hashTag;

    /** How long one command may take before the verb fails. Default 5s. */
    private @Nullable Duration commandTimeout;

    /** How long opening the connection may take. Default 5s. */
    private @Nullable Duration connectTimeout;

    /** The connection's name in CLIENT LIST. Default pubsub-worker. */
    private @Nullable String clientName;

    public @Nullable String getUri() {
      return uri;
    }

    public void setUri(@Nullable String uri) {
      this.uri = uri;
    }

    public boolean isCluster() {
      return cluster;
    }

    public void setCluster(boolean cluster) {
      this.cluster = cluster;
    }

    public @Nullable String getKeyPrefix() {
      return keyPrefix;
    }

    public void setKeyPrefix(@Nullable String keyPrefix) {
      this.keyPrefix = keyPrefix;
    }

    public @Nullable String getHashTag() {
      return hashTag;
    }

    public void setHashTag(@Nullable String hashTag) {
      this.hashTag = hashTag;
    }

    public @Nullable Duration getCommandTimeout() {
      return commandTimeout;
    }

    public void setCommandTimeout(@Nullable Duration commandTimeout) {
      this.commandTimeout = commandTimeout;
    }

    public @Nullable Duration getConnectTimeout() {
      return connectTimeout;
    }

    public void setConnectTimeout(@Nullable Duration connectTimeout) {
      this.connectTimeout = connectTimeout;
    }

    public @Nullable String getClientName() {
      return clientName;
    }

    public void setClientName(@Nullable String clientName) {
      this.clientName = clientName;
    }
  }

  /**
   * {@code pubsub-worker.lock-store.sql}: the settings of {@code SqlLockSettings}, and where its
   * connections come from. With {@code url} set, the store opens a HikariCP pool of its own;
   * without it, it borrows from the application's DataSource bean ({@code data-source} names one
   * when there are several).
   */
  public static class Sql {

    /**
     * The JDBC URL of a database for the locks alone (PostgreSQL, MySQL/MariaDB or H2), served by a
     * pool of the store's own. Default: none, the application's DataSource is used.
     */
    private @Nullable String url;

    /** The user of url's pool. */
    private @Nullable String username;

    /** The password of url's pool. Never logged. */
    private @Nullable String password;

    /** The size of url's pool. */
    private int maximumPoolSize = 4;

    /**
     * How long getting a connection of url's pool may take, and opening one (the driver's connect
     * timeout, for PostgreSQL and MySQL/MariaDB).
     */
    private Duration connectTimeout = Duration.ofSeconds(5);

    /**
     * The name of the DataSource bean to borrow connections from, when the application has several
     * and url is not set. Default: the application's only (or primary) DataSource.
     */
    private @Nullable String dataSource;

    /** The lock table's name, a plain SQL identifier. Default pubsub_worker_locks. */
    private @Nullable String table;

    /** Whether to create the table (and its index) at start-up if it is missing. */
    private boolean createTable;

    /**
     * The dialect: postgresql, mariadb, mysql or h2. Default: detected from the connection's
     * metadata (which opens a connection at start-up).
     */
    private @Nullable String dialect;

    /** How long one of the store's statements may run before it is cancelled. Default 5s. */
    private @Nullable Duration statementTimeout;

    /**
     * How long a connection waits for the database's next bytes (a socket read timeout) while the
     * store's statements run. Default 7s; not shorter than statement-timeout.
     */
    private @Nullable Duration socketTimeout;

    /** How often a verb is retried after a transient error (deadlock, serialization). Default 3. */
    private @Nullable Integer transientRetries;

    public @Nullable String getUrl() {
      return url;
    }

    public void setUrl(@Nullable String url) {
      this.url = url;
    }

    public @Nullable String getUsername() {
      return username;
    }

    public void setUsername(@Nullable String username) {
      this.username = username;
    }

    public @Nullable String getPassword() {
      return password;
    }

    public void setPassword(@Nullable String password) {
      this.password = password;
    }

    public int getMaximumPoolSize() {
      return maximumPoolSize;
    }

    public void setMaximumPoolSize(int maximumPoolSize) {
      this.maximumPoolSize = maximumPoolSize;
    }

    public Duration getConnectTimeout() {
      return connectTimeout;
    }

    public void setConnectTimeout(Duration connectTimeout) {
      this.connectTimeout = connectTimeout;
    }

    public @Nullable String getDataSource() {
      return dataSource;
    }

    public void setDataSource(@Nullable String dataSource) {
      this.dataSource = dataSource;
    }

    public @Nullable String getTable() {
      return table;
    }

    public void setTable(@Nullable String table) {
      this.table = table;
    }

    public boolean isCreateTable() {
      return createTable;
    }

    public void setCreateTable(boolean createTable) {
      this.createTable = createTable;
    }

    public @Nullable String getDialect() {
      return dialect;
    }

    public void setDialect(@Nullable String dialect) {
      this.dialect = dialect;
    }

    public @Nullable Duration getStatementTimeout() {
      return statementTimeout;
    }

    public void setStatementTimeout(@Nullable Duration statementTimeout) {
      this.statementTimeout = statementTimeout;
    }

    public @Nullable Duration getSocketTimeout() {
      return socketTimeout;
    }

    public void setSocketTimeout(@Nullable Duration socketTimeout) {
      this.socketTimeout = socketTimeout;
    }

    public @Nullable Integer getTransientRetries() {
      return transientRetries;
    }

    public void setTransientRetries(@Nullable Integer transientRetries) {
      this.transientRetries = transientRetries;
    }
  }

  /** {@code pubsub-worker.lock-store.datastore}: the settings of {@code DatastoreLockSettings}. */
  public static class Datastore {

    /**
     * The Google Cloud project. Default: spring.cloud.gcp.project-id, else the environment's
     * project.
     */
    private @Nullable String projectId;

    /** The Firestore database in Datastore mode. Default: the (default) database. */
    private @Nullable String databaseId;

    /** The namespace of the lock entities. Default: the default namespace. */
    private @Nullable String namespace;

    /** The kind of the lock entities. Default PubsubWorkerLock. */
    private @Nullable String kind;

    /**
     * An emulator's host:port, reached in plain text without credentials. Default: the
     * DATASTORE_EMULATOR_HOST environment variable, else Google Cloud.
     */
    private @Nullable String emulatorHost;

    /** How many times one verb's transaction is attempted. Default 6. */
    private @Nullable Integer maxAttempts;

    /** The deadline of each RPC. Default 10s. */
    private @Nullable Duration rpcTimeout;

    public @Nullable String getProjectId() {
      return projectId;
    }

    public void setProjectId(@Nullable String projectId) {
      this.projectId = projectId;
    }

    public @Nullable String getDatabaseId() {
      return databaseId;
    }

    public void setDatabaseId(@Nullable String databaseId) {
      this.databaseId = databaseId;
    }

    public @Nullable String getNamespace() {
      return namespace;
    }

    public void setNamespace(@Nullable String namespace) {
      this.namespace = namespace;
    }

    public @Nullable String getKind() {
      return kind;
    }

    public void setKind(@Nullable String kind) {
      this.kind = kind;
    }

    public @Nullable String getEmulatorHost() {
      return emulatorHost;
    }

    public void setEmulatorHost(@Nullable String emulatorHost) {
      this.emulatorHost = emulatorHost;
    }

    public @Nullable Integer getMaxAttempts() {
      return maxAttempts;
    }

    public void setMaxAttempts(@Nullable Integer maxAttempts) {
      this.maxAttempts = maxAttempts;
    }

    public @Nullable Duration getRpcTimeout() {
      return rpcTimeout;
    }

    public void setRpcTimeout(@Nullable Duration rpcTimeout) {
      this.rpcTimeout = rpcTimeout;
    }
  }

  /** {@code pubsub-worker.subscriptions.<id>}: how one guarded subscription runs. */
  public static class Subscription {

    /**
     * The Pub/Sub subscription: its short name in spring.cloud.gcp's project, or its full path
     * projects/P/subscriptions/S. Default: the id.
     */
    private @Nullable String subscription;

    /** How the handler runs: lock (at most once per key), mutex (one at a time per key) or none. */
    private GuardMode guard = GuardMode.LOCK;

    /**
     * What a message's idempotency key is: message-id (Pub/Sub's message id: catches redeliveries),
     * or attribute:NAME (an attribute's value, e.g. attribute:order_id: also catches a producer
     * that publishes one event twice). A message without it is dead-lettered unrun. For any other
     * key, set a MessageKey in a GuardedReceiverCustomizer.
     */
    private String key = "message-id";

    /**
     * The namespace the keys are stored under (NAMESPACE:KEY), so that two subscriptions on one
     * lock store never make each other's messages duplicates. Default: the id. Subscriptions that
     * share one de-duplicate across each other.
     */
    private @Nullable String keyNamespace;

    /** How long a claim protects its key without a heartbeat (extended every lease/3). */
    private Duration lease = IdempotencyGuard.DEFAULT_LEASE;

    /** How long a completed key suppresses duplicates. */
    private Duration ttl = IdempotencyGuard.DEFAULT_TTL;

    /**
     * How long a delivery whose key is held waits, parked, before it is nacked; 0s nacks at once.
     * Must be below the subscriber's max-ack-extension-period (Spring Cloud GCP's
     * spring.cloud.gcp.pubsub[.subscription.NAME].max-ack-extension-period; the client's default is
     * 60 minutes).
     */
    private Duration inProgressMaxWait = GuardedReceiver.DEFAULT_IN_PROGRESS_MAX_WAIT;

    /**
     * The topic terminal failures (a PoisonMessageException, a poison-exceptions class, a message
     * without a key) are published to before their ack: a short name in spring.cloud.gcp's project
     * or projects/P/topics/T. Default none: they are nacked with an ERROR, and come back until the
     * subscription's own dead-letter policy takes them.
     */
    private @Nullable String deadLetterTopic;

    /**
     * Exception classes (fully qualified names) that are terminal, besides PoisonMessageException:
     * thrown by the handler, itself or as a cause, the message is dead-lettered after one attempt.
     */
    private List<String> poisonExceptions = new ArrayList<>();

    /** Whether a message without a (valid) key runs unguarded instead of being dead-lettered. */
    private boolean allowUnguarded;

    /** Whether each claim stores the payload's SHA-256, so that a key reused is reported. */
    private boolean fingerprint;

    /**
     * Whether the subscription has message ordering on: deliveries of one ordering key then wait in
     * line behind each other, so parking keeps their order.
     */
    private boolean messageOrdering;

    /**
     * Whether the handler runs in the SQL lock store's transaction that writes DONE (its writes
     * through HandlerContext.resource(Connection.class) commit with it). SQL lock store only.
     */
    private boolean transactional;

    public @Nullable String getSubscription() {
      return subscription;
    }

    public void setSubscription(@Nullable String subscription) {
      this.subscription = subscription;
    }

    public GuardMode getGuard() {
      return guard;
    }

    public void setGuard(GuardMode guard) {
      this.guard = guard;
    }

    public String getKey() {
      return key;
    }

    public void setKey(String key) {
      this.key = key;
    }

    public @Nullable String getKeyNamespace() {
      return keyNamespace;
    }

    public void setKeyNamespace(@Nullable String keyNamespace) {
      this.keyNamespace = keyNamespace;
    }

    public Duration getLease() {
      return lease;
    }

    public void setLease(Duration lease) {
      this.lease = lease;
    }

    public Duration getTtl() {
      return ttl;
    }

    public void setTtl(Duration ttl) {
      this.ttl = ttl;
    }

    public Duration getInProgressMaxWait() {
      return inProgressMaxWait;
    }

    public void setInProgressMaxWait(Duration inProgressMaxWait) {
      this.inProgressMaxWait = inProgressMaxWait;
    }

    public @Nullable String getDeadLetterTopic() {
      return deadLetterTopic;
    }

    public void setDeadLetterTopic(@Nullable String deadLetterTopic) {
      this.deadLetterTopic = deadLetterTopic;
    }

    public List<String> getPoisonExceptions() {
      return poisonExceptions;
    }

    public void setPoisonExceptions(List<String> poisonExceptions) {
      this.poisonExceptions = poisonExceptions;
    }

    public boolean isAllowUnguarded() {
      return allowUnguarded;
    }

    public void setAllowUnguarded(boolean allowUnguarded) {
      this.allowUnguarded = allowUnguarded;
    }

    public boolean isFingerprint() {
      return fingerprint;
    }

    public void setFingerprint(boolean fingerprint) {
      this.fingerprint = fingerprint;
    }

    public boolean isMessageOrdering() {
      return messageOrdering;
    }

    public void setMessageOrdering(boolean messageOrdering) {
      this.messageOrdering = messageOrdering;
    }

    public boolean isTransactional() {
      return transactional;
    }

    public void setTransactional(boolean transactional) {
      this.transactional = transactional;
    }

    /** The Pub/Sub subscription's name as configured, or the id. */
    String subscriptionName(String id) {
      return subscription == null ? id : subscription;
    }

    /** The key namespace as configured, or the id. */
    String keyNamespace(String id) {
      return keyNamespace == null ? id : keyNamespace;
    }

    void validate(String path, String id, Errors errors) {
      if (id.isEmpty() || id.indexOf(':') >= 0) {
        errors.reject(
            "invalid",
            PREFIX + ".subscriptions: the id '" + id + "' must be non-empty and without ':'");
        return;
      }
      if (subscription != null && subscription.isBlank()) {
        errors.rejectValue(path + "subscription", "invalid", "must not be blank");
      }
      try {
        MessageKeys.parse(key);
      } catch (IllegalArgumentException e) {
        errors.rejectValue(path + "key", "invalid", e.getMessage());
      }
      if (keyNamespace != null && (keyNamespace.isEmpty() || keyNamespace.indexOf(':') >= 0)) {
        errors.rejectValue(path + "keyNamespace", "invalid", "must be non-empty and without ':'");
      }
      if (lease.compareTo(MIN_GUARD_DURATION) < 0) {
        errors.rejectValue(
            path + "lease",
            "invalid",
            "must be at least 1s (a number without a unit is milliseconds: write 30s)");
      }
      if (ttl.compareTo(MIN_GUARD_DURATION) < 0) {
        errors.rejectValue(
            path + "ttl",
            "invalid",
            "must be at least 1s (a number without a unit is milliseconds: write 24h)");
      }
      if (inProgressMaxWait.isNegative()) {
        errors.rejectValue(path + "inProgressMaxWait", "invalid", "must be zero or positive");
      }
      if (deadLetterTopic != null && deadLetterTopic.isBlank()) {
        errors.rejectValue(path + "deadLetterTopic", "invalid", "must not be blank");
      }
      for (int i = 0; i < poisonExceptions.size(); i++) {
        String problem = PoisonExceptions.problem(poisonExceptions.get(i));
        if (problem != null) {
          errors.rejectValue(path + "poisonExceptions[" + i + "]", "invalid", problem);
        }
      }
    }
  }

  /** {@code pubsub-worker.health}: the health indicator's probe of the lock store. */
  public static class Health {

    /** How often the lock store is probed (a read of one key); at least 100ms. */
    private Duration lockStoreProbeInterval = Duration.ofSeconds(10);

    /**
     * The health indicator reports DOWN when the lock store has not answered (a probe, or any guard
     * call) for this long; longer than lock-store-probe-interval.
     */
    private Duration lockStoreStaleAfter = Duration.ofSeconds(30);

    public Duration getLockStoreProbeInterval() {
      return lockStoreProbeInterval;
    }

    public void setLockStoreProbeInterval(Duration lockStoreProbeInterval) {
      this.lockStoreProbeInterval = lockStoreProbeInterval;
    }

    public Duration getLockStoreStaleAfter() {
      return lockStoreStaleAfter;
    }

    public void setLockStoreStaleAfter(Duration lockStoreStaleAfter) {
      this.lockStoreStaleAfter = lockStoreStaleAfter;
    }
  }
}
