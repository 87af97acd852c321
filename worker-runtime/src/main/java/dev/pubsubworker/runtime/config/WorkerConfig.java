package dev.pubsubworker.runtime.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigParseOptions;
import com.typesafe.config.ConfigValue;
import dev.pubsubworker.core.DurationText;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

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
 * @param workerId this process's name in dead letters ({@code pubsub-worker-worker-id}); empty
 *     means the host name, found at start-up
 * @param lockStore the lock store and its settings
 * @param observability the metrics and health server
 * @param logging the log format
 * @param subscriptions the subscriptions by id, iterating in the order they appear in the config
 *     (an unmodifiable copy that keeps the given map's order)
 * @param plugins the raw {@code plugins} subtree: each plugin's settings under its name
 * @param source the whole config the settings were read from
 */
public record WorkerConfig(
    String projectId,
    Optional<String> pubsubEmulatorHost,
    Optional<Path> pluginsDir,
    Duration shutdownGrace,
    String workerId,
    LockStoreConfig lockStore,
    ObservabilityConfig observability,
    LoggingConfig logging,
    Map<String, SubscriptionConfig> subscriptions,
    Config plugins,
    Config source) {

  /** The namespace of every setting. */
  public static final String ROOT = "pubsub-worker";

  /** Keeps the subscriptions' order: {@code Map.copyOf} would not. */
  public WorkerConfig {
    subscriptions = Collections.unmodifiableMap(new LinkedHashMap<>(subscriptions));
  }

  /** The longest {@code worker-id}: it is sent as a message attribute. */
  static final int MAX_WORKER_ID_LENGTH = 255;

  /** Store timeouts: the drivers keep some of them as int milliseconds. */
  static final Duration MAX_TIMEOUT = Duration.ofHours(1);

  /** HikariCP refuses a connection timeout below 250 ms. */
  static final Duration MIN_SQL_CONNECT_TIMEOUT = Duration.ofMillis(250);

  /** Connections in the SQL lock store's pool. */
  static final int MAX_POOL_SIZE = 1000;

  /**
   * The shortest {@code lock-store-stuck-after} (and {@code handler-stuck-after}, when set): a
   * healthy lock-store call or handler can take that long under ordinary load, so a shorter bound
   * would have Kubernetes restart healthy pods.
   */
  static final Duration MIN_STUCK_AFTER = Duration.ofSeconds(1);

  /**
   * The shortest {@code pubsub-stream-settle-time}: a reconnect takes the client at least 100 ms.
   */
  static final Duration MIN_STREAM_SETTLE = Duration.ofMillis(100);

  /**
   * The longest {@code pubsub-stream-settle-time}: the client closes a stream its server has not
   * answered for 15 s after a keep-alive, so a stream that needs longer to count as up never does.
   */
  static final Duration MAX_STREAM_SETTLE = Duration.ofSeconds(15);

  /**
   * Loads {@code file} the way the process does: system properties override the file, which
   * overrides every {@code reference.conf} on the class path; {@code ${?ENV}} substitutions are
   * resolved.
   *
   * <p>The file's top-level keys must be {@value #ROOT} or a namespace that some {@code
   * reference.conf} on the class path declares (a library that reads its own settings); any other
   * key is a problem (reported alone: the settings under it were not read), with a hint when it
   * looks like a misspelled {@value #ROOT}. A missing file, a folder, and a file that cannot be
   * read are each their own problem.
   *
   * @throws InvalidConfigException if the file cannot be read or parsed or the settings are invalid
   */
  public static WorkerConfig loadFile(Path file, ClassLoader loader) {
    Config parsed;
    Config own;
    try {
      String problem = unreadable(file);
      if (problem != null) {
        throw new InvalidConfigException(List.of(new ConfigProblem("config file", problem, "")));
      }
      own =
          ConfigFactory.parseFile(
              file.toFile(), ConfigParseOptions.defaults().setAllowMissing(false));
      parsed = ConfigFactory.load(loader, own.withFallback(ConfigFactory.empty()));
    } catch (ConfigException e) {
      throw new InvalidConfigException(List.of(fromParseError(e)));
    }
    return checkRootsThenLoad(own, parsed, loader);
  }

  /**
   * Loads the settings when no file was named, by the standard Typesafe Config lookup, with the
   * same checks as {@link #loadFile}: the file of {@code -Dconfig.file} is read exactly as {@link
   * #loadFile} reads a file; otherwise the application config ({@code -Dconfig.resource}, {@code
   * -Dconfig.url}, or {@code application.conf} on the class path) has its top-level keys checked
   * the same way before the settings are read.
   *
   * @throws InvalidConfigException if the config cannot be read or parsed or the settings are
   *     invalid
   */
  public static WorkerConfig loadDefault(ClassLoader loader) {
    String file = System.getProperty("config.file");
    if (file != null) {
      return loadFile(Path.of(file), loader);
    }
    Config own;
    Config parsed;
    try {
      ConfigFactory.invalidateCaches();
      own = ConfigFactory.defaultApplication(loader);
      parsed = ConfigFactory.load(loader, own);
    } catch (ConfigException e) {
      throw new InvalidConfigException(
          List.of(
              new ConfigProblem(
                  "config", e.getMessage(), e.origin() == null ? "" : e.origin().description())));
    }
    return checkRootsThenLoad(own, parsed, loader);
  }

  private static WorkerConfig checkRootsThenLoad(Config own, Config parsed, ClassLoader loader) {
    // A misplaced root hides every setting under it: report that alone, not its consequences
    // ("project-id is required", ...).
    KnownSecrets.configure(parsed);
    List<ConfigProblem> rootProblems = unknownRootKeys(own, loader);
    if (!rootProblems.isEmpty()) {
      throw new InvalidConfigException(rootProblems);
    }
    return load(parsed);
  }

  private static String unreadable(Path file) {
    if (Files.isDirectory(file)) {
      return file + " is a folder, not a config file";
    }
    if (!Files.exists(file)) {
      return "no such file: " + file;
    }
    if (!Files.isRegularFile(file)) {
      return file + " is not a regular file";
    }
    if (!Files.isReadable(file)) {
      return file + " cannot be read (permission denied)";
    }
    // Permission bits do not stop root, but a read can still fail (an I/O error, /proc files).
    try (java.io.InputStream in = Files.newInputStream(file)) {
      in.read();
    } catch (java.nio.file.AccessDeniedException e) {
      return file + " cannot be read (permission denied)";
    } catch (java.io.IOException e) {
      return file + " cannot be read (" + (e.getMessage() == null ? e : e.getMessage()) + ")";
    }
    return null;
  }

  /** Top-level keys of the user's file that nothing on the class path reads. */
  private static List<ConfigProblem> unknownRootKeys(Config own, ClassLoader loader) {
    Set<String> known = new TreeSet<>(ConfigFactory.defaultReference(loader).root().keySet());
    known.add(ROOT);
    List<ConfigProblem> problems = new ArrayList<>();
    for (String key : orderedKeys(own)) {
      if (known.contains(key)) {
        continue;
      }
      String hint =
          editDistance(key, ROOT) <= 3
              ? "unknown setting; did you mean '" + ROOT + "'?"
              : "unknown setting: the worker reads only " + ROOT + " { ... }";
      problems.add(new ConfigProblem(key, hint, SettingsReader.origin(own.root().get(key))));
    }
    return problems;
  }

  private static int editDistance(String a, String b) {
    int[] previous = new int[b.length() + 1];
    int[] current = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      previous[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      current[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        current[j] =
            Math.min(Math.min(current[j - 1] + 1, previous[j] + 1), previous[j - 1] + cost);
      }
      int[] swap = previous;
      previous = current;
      current = swap;
    }
    return previous[b.length()];
  }

  /**
   * Reads and checks the settings under {@value #ROOT} of a loaded, resolved config. Before
   * anything else, hands the secrets it holds to {@link KnownSecrets}, which masks them in
   * everything the process prints from then on (as the config read last).
   *
   * @throws InvalidConfigException listing every problem found
   */
  public static WorkerConfig load(Config config) {
    // First of all, so that no problem, log line or error about this config can show a secret.
    KnownSecrets.configure(config);
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
    } else if (!projectId.isBlank() && !projectId.matches(ResourceNames.PROJECT_ID)) {
      top.problem(
          "project-id",
          "must be a Google Cloud project id (letters, digits, '-', '.', ':'), but was '"
              + projectId
              + "'");
    }
    String emulator = top.string("pubsub-emulator-host");
    checkHostPort(top, "pubsub-emulator-host", emulator);
    String pluginsDir = top.string("plugins-dir");
    Duration grace = top.positiveDuration("shutdown-grace");
    String workerId = top.string("worker-id");
    if (workerId.length() > MAX_WORKER_ID_LENGTH
        || workerId.chars().anyMatch(Character::isISOControl)) {
      top.problem(
          "worker-id",
          "must be at most "
              + MAX_WORKER_ID_LENGTH
              + " characters without control characters, but was '"
              + (workerId.length() > 40 ? workerId.substring(0, 40) + "..." : workerId)
                  .replaceAll("\\p{Cntrl}", "?")
              + "'");
    }
    int before = problems.size();
    LockStoreConfig lockStore = readLockStore(top.object("lock-store"));
    boolean storeValid = problems.size() == before;
    SettingsReader obs = top.object("observability");
    int port = obs.intInRange("http-port", 0, 65535);
    String httpHost = obs.string("http-host");
    if (!obs.failed("http-host")) {
      HostSyntax.problem(httpHost)
          .ifPresent(
              why ->
                  obs.problem(
                      "http-host",
                      "must be a host name or IP address, such as 0.0.0.0, but '"
                          + httpHost
                          + "' "
                          + why));
    }
    ObservabilityConfig observability =
        new ObservabilityConfig(
            port,
            httpHost,
            obs.duration("lock-store-probe-interval", Duration.ofMillis(100)),
            obs.positiveDuration("lock-store-stale-after"),
            obs.duration("lock-store-stuck-after", MIN_STUCK_AFTER),
            handlerStuckAfter(obs),
            obs.duration("pubsub-stream-settle-time", MIN_STREAM_SETTLE, MAX_STREAM_SETTLE),
            readTracing(obs.object("tracing")));
    if (!obs.failed("lock-store-stale-after")
        && !obs.failed("lock-store-probe-interval")
        && observability.lockStoreStaleAfter().compareTo(observability.lockStoreProbeInterval())
            <= 0) {
      obs.problem(
          "lock-store-stale-after",
          "must be longer than lock-store-probe-interval ("
              + DurationText.of(observability.lockStoreProbeInterval())
              + "), or readiness fails between two good probes");
    }
    obs.rejectUnknown();
    SettingsReader logs = top.object("logging");
    LoggingConfig logging =
        new LoggingConfig(
            logs.choice("format", LogFormat.class, LogFormat.TEXT),
            logs.choice("key-format", KeyLogFormat.class, KeyLogFormat.PLAIN),
            logs.choice("source-location", LogSourceLocation.class, LogSourceLocation.WARN));
    logs.rejectUnknown();

    SettingsReader defaultsReader = top.object("subscription-defaults");
    Config defaults = defaultsReader.config();
    SubscriptionConfig defaultSettings =
        SubscriptionConfig.read(defaultsReader, "defaults", "", "", projectId);
    checkTransactional(defaultsReader, defaultSettings.guard(), lockStore);
    checkGuardCombination(defaultsReader, defaultSettings.guard(), storeValid ? lockStore : null);
    defaultsReader.rejectUnknown();

    Map<String, SubscriptionConfig> subscriptions = new LinkedHashMap<>();
    SettingsReader subs = top.object("subscriptions");
    Map<String, String> seenNames = new HashMap<>();
    for (String id : orderedKeys(subs.config())) {
      SettingsReader raw = subs.object(id);
      SettingsReader sub = new SettingsReader(raw.config(), defaults, subs.path(id), problems);
      String name = sub.has("name") ? sub.string("name") : id;
      if (name.isBlank()) {
        sub.problem("name", "must name a Pub/Sub subscription");
      } else if (!name.matches(ResourceNames.SUBSCRIPTION_NAME)) {
        sub.problem(
            "name",
            "must be a subscription id (a letter, then up to 254 letters, digits and - . _ ~ + %)"
                + " or projects/PROJECT/subscriptions/ID, but was '"
                + name
                + "'");
      }
      String handler = sub.string("handler");
      if (handler.isBlank() && sub.has("handler")) {
        sub.problem("handler", "must name a handler that a plugin binds");
      }
      SubscriptionConfig s = SubscriptionConfig.read(sub, id, name, handler, projectId);
      String previous = seenNames.putIfAbsent(name, id);
      if (previous != null) {
        sub.problem(
            "name", "subscription '" + name + "' is also used by subscriptions." + previous);
      }
      checkTransactional(sub, s.guard(), lockStore);
      checkGuardCombination(sub, s.guard(), storeValid ? lockStore : null);
      sub.rejectUnknown();
      subscriptions.put(id, s);
    }
    if (subscriptions.isEmpty() && problems.isEmpty()) {
      problems.add(
          new ConfigProblem(
              ROOT + ".subscriptions", "is empty: configure at least one subscription", ""));
    }
    top.object("plugins");
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
        workerId,
        lockStore,
        observability,
        logging,
        subscriptions,
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
    return List.copyOf(subscriptions.values());
  }

  /** The settings of plugin {@code name} ({@code pubsub-worker.plugins.NAME}), empty if none. */
  public Config pluginConfig(String name) {
    String key = com.typesafe.config.ConfigUtil.quoteString(name);
    return plugins.hasPath(key) ? plugins.getConfig(key) : ConfigFactory.empty();
  }

  private static LockStoreConfig readLockStore(SettingsReader r) {
    LockStoreType type = r.choice("type", LockStoreType.class, LockStoreType.IN_MEMORY);
    if (!r.failed("type")) {
      StoreLibraries.missing(type, WorkerConfig.class.getClassLoader())
          .ifPresent(p -> r.problem("type", p));
    }
    SettingsReader redis = r.object("redis");
    RedisStoreConfig redisConfig =
        new RedisStoreConfig(
            redis.string("uri"),
            redis.string("key-prefix"),
            redis.bool("cluster"),
            redis.string("hash-tag"),
            redis.duration("command-timeout", Duration.ofMillis(1), MAX_TIMEOUT),
            redis.duration("connect-timeout", Duration.ofMillis(1), MAX_TIMEOUT));
    redis.rejectUnknown();
    SettingsReader sql = r.object("sql");
    SqlStoreConfig sqlConfig =
        new SqlStoreConfig(
            sql.string("jdbc-url"),
            sql.string("user"),
            sql.string("password"),
            sql.string("table"),
            sql.bool("create-table"),
            sql.intInRange("maximum-pool-size", 1, MAX_POOL_SIZE),
            sql.duration("statement-timeout", Duration.ofSeconds(1), MAX_TIMEOUT),
            sql.duration("socket-timeout", Duration.ofSeconds(1), MAX_TIMEOUT),
            sql.duration("connect-timeout", MIN_SQL_CONNECT_TIMEOUT, MAX_TIMEOUT),
            HikariSettings.read(sql));
    if (!sql.failed("statement-timeout")
        && !sql.failed("socket-timeout")
        && sqlConfig.socketTimeout().compareTo(sqlConfig.statementTimeout()) < 0) {
      sql.problem(
          "socket-timeout",
          "must be at least statement-timeout ("
              + DurationText.of(sqlConfig.statementTimeout())
              + "), or a slow statement loses its connection instead of being cancelled");
    }
    sql.rejectUnknown();
    SettingsReader ds = r.object("datastore");
    DatastoreStoreConfig dsConfig =
        new DatastoreStoreConfig(
            ds.string("project-id"),
            ds.string("database-id"),
            ds.string("namespace"),
            ds.string("kind"),
            ds.string("emulator-host"));
    checkHostPort(ds, "emulator-host", dsConfig.emulatorHost());
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
        } else {
          JdbcUrlSyntax.problem(sqlConfig.jdbcUrl()).ifPresent(p -> sql.problem("jdbc-url", p));
        }
      }
      default -> {}
    }
    r.rejectUnknown();
    return new LockStoreConfig(type, redisConfig, sqlConfig, dsConfig);
  }

  private static void checkTransactional(
      SettingsReader r, SubscriptionConfig.GuardPolicy s, LockStoreConfig lockStore) {
    if (s.transactional() && lockStore.type() != LockStoreType.SQL) {
      r.problemOnAny(
          "needs lock-store.type = sql, but it is " + SettingsReader.kebab(lockStore.type()),
          "transactional");
    }
    if (s.transactional() && s.mode() != GuardMode.LOCK) {
      r.problemOnAny("applies to guard = lock only", "transactional", "guard");
    }
  }

  /**
   * Lease, ttl and the store's timeouts must let the guard keep its promise.
   *
   * <ul>
   *   <li>With {@code guard = lock}, {@code ttl} must be at least {@code lease}: a duplicate
   *       delivery that waited out the holder's lease must still find the DONE record, or it runs
   *       again.
   *   <li>With the heartbeat on and a Redis store, one extension (sent every lease/3) may take up
   *       to {@code redis.command-timeout}; it must land before the lease lapses, so the timeout
   *       must be below two thirds of the lease.
   * </ul>
   *
   * Settings that already have a problem are not checked again, so each mistake is one line.
   *
   * @param store the lock store, or null if its settings have problems
   */
  private static void checkGuardCombination(
      SettingsReader r, SubscriptionConfig.GuardPolicy s, LockStoreConfig store) {
    if (r.failed("lease") || r.failed("ttl") || r.failed("guard") || r.failed("heartbeat")) {
      return;
    }
    if (s.mode() == GuardMode.LOCK && s.ttl().compareTo(s.lease()) < 0) {
      r.problemOnAny(
          "ttl ("
              + DurationText.of(s.ttl())
              + ") must be at least the lease ("
              + DurationText.of(s.lease())
              + ") with guard = lock, or a duplicate that waited out a holder's lease runs again",
          "ttl",
          "lease",
          "guard");
    }
    if (store != null
        && s.mode() != GuardMode.NONE
        && s.heartbeat()
        && store.type() == LockStoreType.REDIS) {
      Duration timeout = store.redis().commandTimeout();
      if (timeout.multipliedBy(3).compareTo(s.lease().multipliedBy(2)) >= 0) {
        r.problemOnAny(
            "lease "
                + DurationText.of(s.lease())
                + " is too short for the heartbeat: an extension sent every lease/3 may take up to"
                + " lock-store.redis.command-timeout ("
                + DurationText.of(timeout)
                + ") and must land before the lease lapses; use a lease above "
                + DurationText.of(timeout.multipliedBy(3).dividedBy(2)),
            "lease",
            "heartbeat",
            "guard");
      }
    }
  }

  /** {@code handler-stuck-after}: 0s (off), or at least {@link #MIN_STUCK_AFTER}. */
  private static Duration handlerStuckAfter(SettingsReader obs) {
    Duration d = obs.duration("handler-stuck-after", Duration.ZERO);
    if (!obs.failed("handler-stuck-after") && !d.isZero() && d.compareTo(MIN_STUCK_AFTER) < 0) {
      obs.problem(
          "handler-stuck-after",
          "must be 0s (off) or at least "
              + DurationText.of(MIN_STUCK_AFTER)
              + ", but was "
              + DurationText.of(d));
      return Duration.ZERO;
    }
    return d;
  }

  /** {@code host:port} (or {@code [v6]:port}) with a port in 1..65535; empty passes. */
  private static TracingConfig readTracing(SettingsReader r) {
    TracingConfig.Exporter exporter =
        r.choice("exporter", TracingConfig.Exporter.class, TracingConfig.Exporter.NONE);
    String endpoint = r.string("otlp-endpoint");
    URI uri = TracingConfig.off().otlpEndpoint();
    if (!r.failed("otlp-endpoint")) {
      try {
        uri = new URI(endpoint);
        if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))
            || uri.getHost() == null) {
          throw new URISyntaxException(endpoint, "not an http(s) URL with a host");
        }
      } catch (URISyntaxException e) {
        r.problem(
            "otlp-endpoint",
            "must be an http:// or https:// URL such as http://localhost:4318/v1/traces, but was '"
                + endpoint
                + "'");
      }
    }
    String ratioText = r.string("sample-ratio");
    double ratio = 1.0;
    if (!r.failed("sample-ratio")) {
      try {
        ratio = Double.parseDouble(ratioText.trim());
      } catch (NumberFormatException e) {
        ratio = Double.NaN;
      }
      if (!(ratio >= 0.0 && ratio <= 1.0)) {
        r.problem("sample-ratio", "must be a number from 0.0 to 1.0, but was '" + ratioText + "'");
        ratio = 1.0;
      }
    }
    String serviceName = r.string("service-name");
    if (!r.failed("service-name") && serviceName.isBlank()) {
      r.problem("service-name", "must not be empty");
    }
    r.rejectUnknown();
    return new TracingConfig(exporter, uri, ratio, serviceName);
  }

  private static void checkHostPort(SettingsReader r, String key, String value) {
    if (value.isEmpty()) {
      return;
    }
    HostPortSyntax.check(value, true)
        .ifPresent(
            p ->
                r.problem(
                    key,
                    p == HostPortSyntax.Problem.PORT_RANGE
                        ? "must have a port in 1..65535, but was '" + value + "'"
                        : "must be host:port, such as 127.0.0.1:8085, but was '" + value + "'"));
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
