package dev.pubsubworker.runtime.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.worker.Worker;
import dev.pubsubworker.testservices.SubscriptionSpec;
import dev.pubsubworker.testservices.TestServices;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * At a graceful stop the lock-store readiness probe is stopped before the worker closes the store,
 * so a stop with Redis logs no probe failure, even with a probe that reads every 5 ms.
 */
class ProbeAtShutdownTest {

  @Test
  void a_graceful_stop_with_redis_logs_no_probe_warning() {
    Logger probeLog = (Logger) LoggerFactory.getLogger(LockStoreProbe.class);
    ListAppender<ILoggingEvent> lines = new ListAppender<>();
    lines.start();
    probeLog.addAppender(lines);
    try (EmulatorWorkers w = new EmulatorWorkers(SubscriptionSpec.defaults())) {
      WorkerConfig config =
          w.config(
              "",
              """
              pubsub-worker.lock-store { type = redis, redis { uri = "%s", key-prefix = "%s:" } }
              pubsub-worker.observability.lock-store-probe-interval = 100ms
              """
                  .formatted(TestServices.redis().uri(), TestServices.uniqueName("probe")));
      Observability observability = w.observability(config);
      Worker worker = w.create(config, (m, c) -> {}, observability);
      observability.start(worker);
      InetSocketAddress server = observability.httpAddress().orElseThrow();
      worker.start();
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> Http.get(server, "/readyz").status() == 200);

      worker.stop();

      // Observability closes after the worker, as in `run`; the window in between is where the
      // probe used to read a closed store.
      await()
          .during(Duration.ofMillis(500))
          .atMost(Duration.ofSeconds(5))
          .until(() -> problems(lines.list).isEmpty());
      observability.close();
      assertThat(problems(lines.list)).isEmpty();
    } finally {
      probeLog.detachAppender(lines);
    }
  }

  private static List<String> problems(List<ILoggingEvent> events) {
    return events.stream()
        .filter(e -> e.getLevel().isGreaterOrEqual(Level.WARN))
        .map(ILoggingEvent::getFormattedMessage)
        .toList();
  }
}
