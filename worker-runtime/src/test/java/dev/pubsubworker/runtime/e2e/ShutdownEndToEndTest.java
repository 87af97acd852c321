package dev.pubsubworker.runtime.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.runtime.testing.WorkerHarness;
import dev.pubsubworker.runtime.worker.Worker;
import dev.pubsubworker.testservices.SubscriptionSpec;
import dev.pubsubworker.testservices.TestServices;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * A graceful stop with more deliveries buffered than handler threads, in process, so every
 * delivery's outcome is seen: the running handlers are abandoned at the grace, every buffered
 * delivery is nacked without running, no handler starts after the stop, and the stop's log line
 * counts exactly what the dispatcher reported.
 */
class ShutdownEndToEndTest {

  private static final int THREADS = 2;
  private static final int MESSAGES = 8;

  @Test
  void buffered_deliveries_never_run_after_the_stop_and_the_log_counts_what_happened()
      throws Exception {
    Logger workerLog = (Logger) LoggerFactory.getLogger(Worker.class);
    ListAppender<ILoggingEvent> lines = new ListAppender<>();
    lines.start();
    workerLog.addAppender(lines);
    AtomicInteger starts = new AtomicInteger();
    RecordingHandler blocking =
        new RecordingHandler()
            .behave(
                (m, ctx, call) -> {
                  starts.incrementAndGet();
                  new CountDownLatch(1).await(); // until interrupted at the grace
                });
    OutcomeRecorder outcomes = new OutcomeRecorder();
    String settings =
        """
        pubsub-worker.shutdown-grace = 1s
        pubsub-worker.lock-store { type = redis, redis { uri = "%s", key-prefix = "%s:" } }
        """
            .formatted(TestServices.redis().uri(), TestServices.uniqueName("buffered"));
    try (WorkerHarness h = new WorkerHarness(SubscriptionSpec.defaults())) {
      for (int i = 0; i < MESSAGES; i++) {
        h.publish("job " + i, Map.of());
      }
      Worker worker =
          h.create("executor-threads = " + THREADS, settings, blocking, List.of(outcomes));
      worker.start();
      await().atMost(Duration.ofSeconds(60)).until(() -> starts.get() == THREADS);

      worker.stop();

      assertThat(starts).as("no handler started after the stop").hasValue(THREADS);
      assertThat(outcomes.count(Outcome.ABANDONED)).isEqualTo(THREADS);
      long refused = outcomes.count(Outcome.REFUSED_AT_SHUTDOWN);
      assertThat(outcomes.outcomes)
          .as("nothing but abandoned and refused deliveries")
          .hasSize((int) (THREADS + refused));
      assertThat(refused).isBetween(1L, (long) MESSAGES - THREADS);
      assertThat(lines.list)
          .extracting(ILoggingEvent::getFormattedMessage)
          .contains(
              "worker stopped: "
                  + THREADS
                  + " handler(s) were running at the stop, 0 finished within the grace, "
                  + THREADS
                  + " abandoned (interrupted, nacked; "
                  + THREADS
                  + " claim(s) released); "
                  + refused
                  + " delivery(ies) nacked without running");
    } finally {
      workerLog.detachAppender(lines);
    }
  }
}
