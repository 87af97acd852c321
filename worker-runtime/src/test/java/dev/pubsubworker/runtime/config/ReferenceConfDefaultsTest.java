package dev.pubsubworker.runtime.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigResolveOptions;
import com.typesafe.config.ConfigValue;
import dev.pubsubworker.backend.datastore.DatastoreLockSettings;
import dev.pubsubworker.backend.redis.RedisLockSettings;
import dev.pubsubworker.backend.sql.SqlLockSettings;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.runtime.pubsub.StreamHealth;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Pins every default in the runtime's {@code reference.conf} (read from the source file, resolved
 * without the environment, so the {@code ${?ENV}} overrides do not apply): where the core or a
 * backend has a {@code DEFAULT_*} constant for the same thing, the file must say exactly that;
 * every other default is pinned to the value written here, so that changing one is a deliberate
 * act. A setting added to {@code reference.conf} without a pin fails the test.
 */
class ReferenceConfDefaultsTest {

  private static final String ROOT = WorkerConfig.ROOT + ".";

  private static Config reference() {
    return ConfigFactory.parseFile(Path.of("src/main/resources/reference.conf").toFile())
        .resolve(ConfigResolveOptions.noSystem());
  }

  /** Each default by path (under the root), with how to read it and what it must be. */
  private static Map<String, Pin> pins() {
    Map<String, Pin> p = new LinkedHashMap<>();
    // Defaults that a core or backend constant also states.
    p.put("subscription-defaults.lease", duration(IdempotencyGuard.DEFAULT_LEASE));
    p.put("subscription-defaults.ttl", duration(IdempotencyGuard.DEFAULT_TTL));
    p.put("lock-store.redis.uri", string(RedisLockSettings.DEFAULT_URI));
    p.put("lock-store.redis.key-prefix", string(RedisLockSettings.DEFAULT_KEY_PREFIX));
    p.put("lock-store.redis.command-timeout", duration(RedisLockSettings.DEFAULT_COMMAND_TIMEOUT));
    p.put("lock-store.redis.connect-timeout", duration(RedisLockSettings.DEFAULT_CONNECT_TIMEOUT));
    p.put("lock-store.sql.table", string(SqlLockSettings.DEFAULT_TABLE));
    p.put("lock-store.sql.statement-timeout", duration(SqlLockSettings.DEFAULT_STATEMENT_TIMEOUT));
    p.put("lock-store.sql.socket-timeout", duration(SqlLockSettings.DEFAULT_SOCKET_TIMEOUT));
    p.put("lock-store.datastore.kind", string(DatastoreLockSettings.DEFAULT_KIND));
    p.put("lock-store.datastore.namespace", string(DatastoreLockSettings.DEFAULT_NAMESPACE));
    p.put("lock-store.datastore.database-id", string(DatastoreLockSettings.DEFAULT_DATABASE_ID));
    // The runtime's own defaults, which no class states.
    p.put("project-id", string(""));
    p.put("pubsub-emulator-host", string(""));
    p.put("plugins-dir", string(""));
    p.put("shutdown-grace", duration(Duration.ofSeconds(30)));
    p.put("worker-id", string(""));
    p.put("lock-store.type", string("in-memory"));
    p.put("lock-store.redis.cluster", bool(false));
    p.put("lock-store.redis.hash-tag", string(""));
    p.put("lock-store.sql.jdbc-url", string("jdbc:h2:mem:pubsub-worker;DB_CLOSE_DELAY=-1"));
    p.put("lock-store.sql.user", string(""));
    p.put("lock-store.sql.password", string(""));
    p.put("lock-store.sql.create-table", bool(true));
    p.put("lock-store.sql.maximum-pool-size", integer(10));
    p.put("lock-store.sql.connect-timeout", duration(Duration.ofSeconds(5)));
    p.put("lock-store.datastore.project-id", string(""));
    p.put("lock-store.datastore.emulator-host", string(""));
    p.put("observability.http-port", integer(8080));
    p.put("observability.http-host", string("0.0.0.0"));
    p.put("observability.lock-store-probe-interval", duration(Duration.ofSeconds(10)));
    p.put("observability.lock-store-stale-after", duration(Duration.ofSeconds(30)));
    p.put("observability.lock-store-stuck-after", duration(Duration.ofSeconds(60)));
    p.put("observability.handler-stuck-after", duration(Duration.ZERO));
    p.put("observability.pubsub-stream-settle-time", duration(StreamHealth.DEFAULT_SETTLE));
    p.put("observability.tracing.exporter", string("none"));
    p.put("observability.tracing.otlp-endpoint", string("http://localhost:4318/v1/traces"));
    p.put("observability.tracing.sample-ratio", string("1.0"));
    p.put("observability.tracing.service-name", string("pubsub-worker"));
    p.put("logging.format", string("text"));
    p.put("logging.key-format", string("plain"));
    p.put("logging.source-location", string("warn"));
    p.put("subscription-defaults.guard", string("lock"));
    p.put("subscription-defaults.key", string("message-id"));
    p.put("subscription-defaults.key-namespace", string(""));
    p.put("subscription-defaults.heartbeat", bool(true));
    p.put("subscription-defaults.interrupt-on-lease-loss", bool(false));
    p.put("subscription-defaults.allow-unguarded", bool(false));
    p.put("subscription-defaults.fingerprint", bool(false));
    p.put("subscription-defaults.fingerprint-mismatch", string("report"));
    p.put("subscription-defaults.transactional", bool(false));
    p.put("subscription-defaults.exactly-once", string("auto"));
    p.put(
        "subscription-defaults.poison-exceptions",
        new Pin(Config::getStringList, java.util.List.of()));
    p.put("subscription-defaults.dead-letter-topic", string(""));
    p.put("subscription-defaults.dead-letter-subscription", string(""));
    p.put("subscription-defaults.redrive-subscription", string(""));
    p.put("subscription-defaults.flow-control.max-outstanding-messages", integer(1000));
    p.put(
        "subscription-defaults.flow-control.max-outstanding-bytes",
        new Pin(Config::getBytes, 100L * 1024 * 1024));
    p.put("subscription-defaults.parallel-pull-count", integer(1));
    p.put("subscription-defaults.executor-threads", integer(5));
    p.put("subscription-defaults.max-ack-extension", duration(Duration.ofMinutes(60)));
    p.put("subscription-defaults.min-ack-extension", duration(Duration.ofSeconds(60)));
    p.put("subscription-defaults.max-ack-extension-per-call", duration(Duration.ofSeconds(60)));
    p.put("subscription-defaults.in-progress-max-wait", duration(Duration.ofMinutes(2)));
    return p;
  }

  @Test
  void every_default_equals_its_constant_or_its_pin() {
    Config reference = reference();
    Map<String, Pin> pins = pins();
    for (Map.Entry<String, Pin> e : pins.entrySet()) {
      String path = ROOT + e.getKey();
      assertThat(reference.hasPath(path)).as("%s is in reference.conf", path).isTrue();
      assertThat(e.getValue().read().apply(reference, path))
          .as("default of %s", path)
          .isEqualTo(e.getValue().expected());
    }
  }

  @Test
  void every_setting_in_reference_conf_is_pinned() {
    Set<String> settings = new TreeSet<>();
    for (Map.Entry<String, ConfigValue> e : reference().entrySet()) {
      settings.add(e.getKey().substring(ROOT.length()));
    }
    assertThat(settings).containsExactlyInAnyOrderElementsOf(pins().keySet());
  }

  @Test
  void subscriptions_and_plugins_default_to_none() {
    Config reference = reference();
    assertThat(reference.getObject(ROOT + "subscriptions")).isEmpty();
    assertThat(reference.getObject(ROOT + "plugins")).isEmpty();
  }

  private record Pin(ReadFn read, Object expected) {}

  @FunctionalInterface
  private interface ReadFn {
    Object apply(Config config, String path);
  }

  private static Pin duration(Duration expected) {
    return new Pin(Config::getDuration, expected);
  }

  private static Pin string(String expected) {
    return new Pin(Config::getString, expected);
  }

  private static Pin bool(boolean expected) {
    return new Pin(Config::getBoolean, expected);
  }

  private static Pin integer(int expected) {
    return new Pin(Config::getInt, expected);
  }
}
