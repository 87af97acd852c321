package dev.pubsubworker.runtime.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValue;
import dev.pubsubworker.core.FingerprintPolicy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The worker's settings: everything under {@code pubsub-worker}, read eagerly and checked as a
 * whole. {@link #load} either returns a complete, valid config or throws {@link
 * InvalidConfigException} listing every problem (unknown settings, wrong types, bad durations,
 * missing values, unknown choices), each with its path and origin.
 *
 * @param projectId the Google Cloud project of the subscriptions
 * @param pubsubEmulatorHost host:port of a Pub/Sub emulator, if one is used
 * @param pluginsDir a folder of plugin jars, if any
 * @param shutdownGrace how long a graceful stop waits for in-flight handlers
 * @param lockStore the lock store and its settings
 * @param observability the metrics and health server
 * @param logging the log format
 * @param subscriptions the subscriptions by id, in config order
 * @param plugins the raw {@code plugins} subtree: each plugin's settings under its name
 * @param source the whole config the settings were read from
 */
public record WorkerConfig(
    String projectId,
    Optional<String> pubsubEmulatorHost,
    Optional<Path> pluginsDir,
    Duration shutdownGrace,
    LockStoreConfig lockStore,
    ObservabilityConfig observability,
    LoggingConfig logging,
    Map<String, SubscriptionConfig> subscriptions,
    Config plugins,
    Config source) {

  /** The namespace of every setting. */
  public static final String ROOT = "pubsub-worker";

  private static final Pattern KEY_NAMESPACE = Pattern.compile("[A-Za-z0-9._-]{1,100}");

  /**
   * Loads {@code file} the way the process does: system properties override the file, which
   * overrides every {@code reference.conf} on the class path; {@code ${?ENV}} substitutions are
   * resolved.
   *
   * @throws InvalidConfigException if the file cannot be parsed or the settings are invalid
   */
  public static WorkerConfig loadFile(Path file, ClassLoader loader) {
    Config parsed;
    try {
      if (!file.toFile().isFile()) {
        throw new InvalidConfigException(
            List.of(new ConfigProblem("config file", "no such file: " + file, "")));
      }
      parsed =
          ConfigFactory.load(
              loader, ConfigFactory.parseFile(file.toFile()).withFallback(ConfigFactory.empty()));
    } catch (ConfigException e) {
      throw new InvalidConfigException(List.of(fromParseError(e)));
    }
    return load(parsed);
  }

  /**
   * Reads and checks the settings under {@value #ROOT} of a loaded, resolved config.
   *
   * @throws InvalidConfigException listing every problem found
   */
  public static WorkerConfig load(Config config) {
    List<ConfigProblem> problems = new ArrayList<>();
    if (!config.hasPath(ROOT)) {
      throw new InvalidConfigException(
          List.of(
              new ConfigProblem(
                  ROOT, "is missing: no reference.conf of the runtime on the class path?", "")));
    }
    SettingsReader top = new SettingsReader(config.getConfig(ROOT), ROOT, problems);

    String projectId = top.string("project-id");
    if (projectId.isBlank() && top.has("project-id")) {
      top.problem(
          "project-id", "is required: set it, or the GOOGLE_CLOUD_PROJECT environment variable");
    }
    String emulator = top.string("pubsub-emulator-host");
    if (!emulator.isEmpty() && !emulator.matches("[^:/\\s]+:\\d{1,5}")) {
      top.problem("pubsub-emulator-host", "must be host:port, but was '" + emulator + "'");
    }
    String pluginsDir = top.string("plugins-dir");
    Duration grace = top.positiveDuration("shutdown-grace");
    LockStoreConfig lockStore = readLockStore(top.object("lock-store"));
    SettingsReader obs = top.object("observability");
    int port = obs.positiveIntOrZero("http-port");
    if (port > 65535) {
      obs.problem("http-port", "must be a port 0..65535, but was " + port);
    }
    ObservabilityConfig observability =
        new ObservabilityConfig(
            port,
            obs.string("http-host"),
            obs.positiveDuration("lock-store-probe-interval"),
            obs.positiveDuration("lock-store-stale-after"),
            obs.positiveDuration("lock-store-stuck-after"));
    obs.rejectUnknown();
    SettingsReader logs = top.object("logging");
    LoggingConfig logging =
        new LoggingConfig(
            logs.choice("format", LogFormat.class, LogFormat.TEXT),
            logs.choice("key-format", KeyLogFormat.class, KeyLogFormat.PLAIN));
    logs.rejectUnknown();

    SettingsReader defaultsReader = top.object("subscription-defaults");
    Config defaults = defaultsReader.config();
    readSubscriptionFields(defaultsReader, "defaults", "", "");
    defaultsReader.rejectUnknown();

    Map<String, SubscriptionConfig> subscriptions = new LinkedHashMap<>();
    SettingsReader subs = top.object("subscriptions");
    Map<String, String> seenNames = new HashMap<>();
    for (String id : orderedKeys(subs.config())) {
      SettingsReader raw = subs.object(id);
      SettingsReader sub =
          new SettingsReader(raw.config().withFallback(defaults), subs.path(id), problems);
      String name = sub.has("name") ? sub.string("name") : id;
      if (name.isBlank()) {
        sub.problem("name", "must name a Pub/Sub subscription");
      }
      String handler = sub.string("handler");
      if (handler.isBlank() && sub.has("handler")) {
        sub.problem("handler", "must name a handler that a plugin binds");
      }
      SubscriptionConfig s = readSubscriptionFields(sub, id, name, handler);
      String previous = seenNames.putIfAbsent(name, id);
      if (previous != null) {
        sub.problem(
            "name", "subscription '" + name + "' is also used by subscriptions." + previous);
      }
      if (s.transactional() && lockStore.type() != LockStoreType.SQL) {
        sub.problem(
            "transactional",
            "needs lock-store.type = sql, but it is " + SettingsReader.kebab(lockStore.type()));
      }
      if (s.transactional() && s.guard() != GuardMode.LOCK) {
        sub.problem("transactional", "applies to guard = lock only");
      }
      sub.rejectUnknown();
      subscriptions.put(id, s);
    }
    if (subscriptions.isEmpty() && problems.isEmpty()) {
      problems.add(
          new ConfigProblem(
              ROOT + ".subscriptions", "is empty: configure at least one subscription", ""));
    }
    top.skip("plugins");
    Config plugins =
        config.hasPath(ROOT + ".plugins")
            ? safeConfig(config, ROOT + ".plugins")
            : ConfigFactory.empty();
    top.rejectUnknown();

    if (!problems.isEmpty()) {
      throw new InvalidConfigException(problems);
    }
    return new WorkerConfig(
        projectId,
        emulator.isEmpty() ? Optional.empty() : Optional.of(emulator),
        pluginsDir.isEmpty() ? Optional.empty() : Optional.of(Path.of(pluginsDir)),
        grace,
        lockStore,
        observability,
        logging,
        Map.copyOf(subscriptions),
        plugins,
        config);
  }

  /**
   * Checks that every subscription names a handler in {@code known}.
   *
   * @throws InvalidConfigException listing every subscription whose handler is unknown
   */
  public void requireHandlers(Collection<String> known) {
    List<ConfigProblem> problems = new ArrayList<>();
    Set<String> names = new TreeSet<>(known);
    for (SubscriptionConfig s : orderedSubscriptions()) {
      if (!names.contains(s.handler())) {
        String path = ROOT + ".subscriptions." + s.id() + ".handler";
        ConfigValue value = source.hasPath(path) ? source.getValue(path) : null;
        problems.add(
            new ConfigProblem(
                path,
                "no plugin binds a handler named '"
                    + s.handler()
                    + "'; handlers found: "
                    + (names.isEmpty() ? "none" : String.join(", ", names)),
                value == null ? "" : SettingsReader.origin(value)));
      }
    }
    if (!problems.isEmpty()) {
      throw new InvalidConfigException(problems);
    }
  }

  /** The subscriptions in the order they appear in the config. */
  public List<SubscriptionConfig> orderedSubscriptions() {
    List<SubscriptionConfig> ordered = new ArrayList<>();
    for (String id : orderedKeys(source.getConfig(ROOT + ".subscriptions"))) {
      ordered.add(subscriptions.get(id));
    }
    return ordered;
  }

  /** The settings of plugin {@code name} ({@code pubsub-worker.plugins.NAME}), empty if none. */
  public Config pluginConfig(String name) {
    String key = com.typesafe.config.ConfigUtil.quoteString(name);
    return plugins.hasPath(key) ? plugins.getConfig(key) : ConfigFactory.empty();
  }

  private static SubscriptionConfig readSubscriptionFields(
      SettingsReader r, String id, String name, String handler) {
    GuardMode guard = r.choice("guard", GuardMode.class, GuardMode.LOCK);
    String keyText = r.string("key");
    KeySpec key = new KeySpec.MessageId();
    try {
      key = KeySpec.parse(keyText);
    } catch (IllegalArgumentException e) {
      r.problem("key", e.getMessage());
    }
    String keyNamespace = keyNamespace(r, id);
    Duration lease = r.positiveDuration("lease");
    Duration ttl = r.positiveDuration("ttl");
    boolean heartbeat = r.bool("heartbeat");
    boolean allowUnguarded = r.bool("allow-unguarded");
    boolean fingerprint = r.bool("fingerprint");
    FingerprintPolicy mismatch =
        r.choice("fingerprint-mismatch", FingerprintPolicy.class, FingerprintPolicy.REPORT);
    boolean transactional = r.bool("transactional");
    boolean interrupt = r.bool("interrupt-on-lease-loss");
    ExactlyOnceMode exactlyOnce =
        r.choice("exactly-once", ExactlyOnceMode.class, ExactlyOnceMode.AUTO);
    SettingsReader flow = r.object("flow-control");
    int maxMessages = flow.positiveInt("max-outstanding-messages");
    long maxBytes = flow.positiveBytes("max-outstanding-bytes");
    flow.rejectUnknown();
    int parallelPull = r.positiveInt("parallel-pull-count");
    int threads = r.positiveInt("executor-threads");
    Duration maxAck = r.positiveDuration("max-ack-extension");
    Duration minAck = r.positiveDuration("min-ack-extension");
    if (minAck.compareTo(Duration.ofSeconds(600)) > 0) {
      r.problem("min-ack-extension", "must be at most 600s (Pub/Sub's limit), but was " + minAck);
    }
    Duration maxAckPerCall = r.positiveDuration("max-ack-extension-per-call");
    if (maxAckPerCall.compareTo(Duration.ofSeconds(10)) < 0
        || maxAckPerCall.compareTo(Duration.ofSeconds(600)) > 0) {
      r.problem(
          "max-ack-extension-per-call",
          "must be between 10s and 600s (Pub/Sub's ack deadline limits), but was " + maxAckPerCall);
    } else if (maxAckPerCall.compareTo(minAck) <= 0) {
      r.problem(
          "max-ack-extension-per-call",
          "must be above min-ack-extension ("
              + minAck
              + "), as the client library requires, but was "
              + maxAckPerCall);
    }
    r.skip("name");
    r.skip("handler");
    return new SubscriptionConfig(
        id,
        name,
        handler,
        guard,
        key,
        keyNamespace,
        lease,
        ttl,
        heartbeat,
        allowUnguarded,
        fingerprint,
        mismatch,
        transactional,
        interrupt,
        exactlyOnce,
        maxMessages,
        maxBytes,
        parallelPull,
        threads,
        maxAck,
        minAck,
        maxAckPerCall);
  }

  /** {@code key-namespace}, or the subscription id when it is empty; checked to have no ':'. */
  private static String keyNamespace(SettingsReader r, String id) {
    String configured = r.string("key-namespace");
    String namespace = configured.isEmpty() ? id : configured;
    if (!KEY_NAMESPACE.matcher(namespace).matches()) {
      r.problem(
          "key-namespace",
          configured.isEmpty()
              ? "defaults to the subscription id, but '"
                  + id
                  + "' is not a valid namespace (1-100 letters, digits, '.', '_' or '-'): set"
                  + " key-namespace"
              : "must be 1-100 letters, digits, '.', '_' or '-' (no ':'), but was '"
                  + configured
                  + "'");
    }
    return namespace;
  }

  private static LockStoreConfig readLockStore(SettingsReader r) {
    LockStoreType type = r.choice("type", LockStoreType.class, LockStoreType.IN_MEMORY);
    SettingsReader redis = r.object("redis");
    RedisStoreConfig redisConfig =
        new RedisStoreConfig(
            redis.string("uri"),
            redis.string("key-prefix"),
            redis.bool("cluster"),
            redis.string("hash-tag"),
            redis.positiveDuration("command-timeout"),
            redis.positiveDuration("connect-timeout"));
    redis.rejectUnknown();
    SettingsReader sql = r.object("sql");
    SqlStoreConfig sqlConfig =
        new SqlStoreConfig(
            sql.string("jdbc-url"),
            sql.string("user"),
            sql.string("password"),
            sql.string("table"),
            sql.bool("create-table"),
            sql.positiveInt("maximum-pool-size"),
            sql.positiveDuration("statement-timeout"),
            sql.positiveDuration("socket-timeout"),
            sql.positiveDuration("connect-timeout"));
    sql.rejectUnknown();
    SettingsReader ds = r.object("datastore");
    DatastoreStoreConfig dsConfig =
        new DatastoreStoreConfig(
            ds.string("project-id"),
            ds.string("database-id"),
            ds.string("namespace"),
            ds.string("kind"),
            ds.string("emulator-host"));
    ds.rejectUnknown();
    switch (type) {
      case REDIS -> {
        if (redisConfig.uri().isBlank()) {
          redis.problem("uri", "is required when lock-store.type = redis");
        }
      }
      case SQL -> {
        if (sqlConfig.jdbcUrl().isBlank()) {
          sql.problem("jdbc-url", "is required when lock-store.type = sql");
        }
      }
      default -> {}
    }
    r.rejectUnknown();
    return new LockStoreConfig(type, redisConfig, sqlConfig, dsConfig);
  }

  /** Object keys in the order of their origin line, so output follows the file. */
  private static List<String> orderedKeys(Config config) {
    List<String> keys = new ArrayList<>(config.root().keySet());
    keys.sort(
        (a, b) -> {
          int la = config.root().get(a).origin().lineNumber();
          int lb = config.root().get(b).origin().lineNumber();
          return la != lb ? Integer.compare(la, lb) : a.compareTo(b);
        });
    return keys;
  }

  private static Config safeConfig(Config config, String path) {
    try {
      return config.getConfig(path);
    } catch (ConfigException e) {
      return ConfigFactory.empty();
    }
  }

  private static ConfigProblem fromParseError(ConfigException e) {
    String origin = e.origin() == null ? "" : e.origin().description();
    String message = e.getMessage();
    // Typesafe prefixes the message with the origin; keep the problem text on its own.
    if (!origin.isEmpty() && message.startsWith(origin)) {
      message = message.substring(origin.length()).replaceFirst("^:\\s*", "");
    }
    return new ConfigProblem("config file", message, origin);
  }
}
