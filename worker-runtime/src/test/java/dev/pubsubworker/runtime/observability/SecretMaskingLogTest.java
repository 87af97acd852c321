package dev.pubsubworker.runtime.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.runtime.config.KnownSecrets;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * A configured secret never reaches a log line, in either format: not in a message or its
 * arguments, an MDC value, an exception's message, cause or suppressed exception (and so the stack
 * trace), nor in what a library logs through java.util.logging; the readiness probe's WARN, which
 * quotes the store's error, included. JSON lines stay valid JSON.
 */
class SecretMaskingLogTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"text", "json"})
  void no_log_line_shows_a_configured_secret(String format) throws Exception {
    String secret = "Lg" + UUID.randomUUID().toString().replace("-", "") + "@:/?#&;=\"\\%";
    KnownSecrets.register(secret);
    Logger log = LoggerFactory.getLogger(SecretMaskingLogTest.class);
    try (CapturedLog captured = CapturedLog.attach(format)) {
      MDC.put("key", "orders:" + secret);
      try {
        LockBackendException e =
            new LockBackendException(
                "claim failed on user:" + secret + "@db",
                new SQLException("database \"test;password=" + secret + "\" does not exist"));
        e.addSuppressed(new IllegalStateException("suppressed " + secret));
        log.warn("store said {} at {}", secret, "user:" + secret + "@127.0.0.1", e);
      } finally {
        MDC.remove("key");
      }
      java.util.logging.Logger.getLogger("org.postgresql.util.PGPropertyUtil")
          .warning("JDBC URL invalid port number: " + secret + "@127.0.0.1");

      LockStoreFreshness freshness = new LockStoreFreshness(Clock.systemUTC());
      LockAdmin failing =
          (LockAdmin)
              java.lang.reflect.Proxy.newProxyInstance(
                  LockAdmin.class.getClassLoader(),
                  new Class<?>[] {LockAdmin.class},
                  (proxy, method, args) -> {
                    throw new LockBackendException(
                        "inspect failed",
                        new java.net.UnknownHostException("root:" + secret + "@127.0.0.1"));
                  });
      LockStoreProbe probe =
          new LockStoreProbe(
              () -> failing, Duration.ofSeconds(60), freshness, new WorkerMetrics(List.of("o")));
      probe.start();
      try {
        await()
            .atMost(Duration.ofSeconds(10))
            .until(() -> captured.events.stream().anyMatch(l -> l.contains("probe failed")));
      } finally {
        probe.stop();
        probe.awaitTerminated(5, TimeUnit.SECONDS);
      }

      List<String> lines = List.copyOf(captured.events);
      assertThat(lines).anyMatch(l -> l.contains("store said ***"));
      assertThat(lines).anyMatch(l -> l.contains("invalid port number: ***@127.0.0.1"));
      assertThat(lines).anyMatch(l -> l.contains("UnknownHostException: root:***@127.0.0.1"));
      String secretCore = secret.substring(0, 34);
      for (String line : lines) {
        assertThat(line).doesNotContain(secretCore);
        if (format.equals("json")) {
          JSON.readTree(line); // still one valid JSON object
        }
      }
    }
  }
}
