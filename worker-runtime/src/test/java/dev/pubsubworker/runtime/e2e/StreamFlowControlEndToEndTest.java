package dev.pubsubworker.runtime.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.pubsub.v1.ReceivedMessage;
import dev.pubsubworker.runtime.testing.WorkerHarness;
import dev.pubsubworker.testservices.SubscriptionSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * With several streams, Pub/Sub leases the worker no more messages than its flow control holds:
 * each stream asks the server for its share of {@code max-outstanding-messages}, not the whole of
 * it. (One google-cloud-pubsub {@code Subscriber} with several streams asks for the whole limit on
 * each and then holds the surplus unreceipted in its transport, where the leases run out.) What the
 * worker was not leased stays available to any other consumer of the subscription.
 */
class StreamFlowControlEndToEndTest {

  private static final int STREAMS = 4;
  private static final int LIMIT = 2;
  private static final int BACKLOG = 60;

  @Test
  void each_of_four_streams_is_leased_its_limit_and_runs_what_it_is_leased() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger started = new AtomicInteger();
    try (WorkerHarness h = new WorkerHarness(SubscriptionSpec.defaults())) {
      h.create(
              """
              parallel-pull-count = %d
              executor-threads = 1
              flow-control.max-outstanding-messages = %d
              """
                  .formatted(STREAMS, LIMIT),
              "",
              (message, context) -> {
                started.incrementAndGet();
                if (!release.await(60, TimeUnit.SECONDS)) {
                  throw new IllegalStateException("not released");
                }
              },
              List.of())
          .start();
      for (int i = 0; i < BACKLOG; i++) {
        h.publish("m" + i, Map.of());
      }
      // One handler thread per stream, each running one of its stream's messages.
      await().atMost(Duration.ofSeconds(30)).until(() -> started.get() == STREAMS);

      // Everything the server did not lease to the worker's streams, pulled by another consumer.
      List<String> rest = new ArrayList<>();
      List<ReceivedMessage> pulled;
      do {
        pulled = h.pubsub.pull(h.fixture.subscription(), 100, Duration.ofSeconds(2));
        pulled.forEach(m -> rest.add(m.getMessage().getMessageId()));
      } while (!pulled.isEmpty() && rest.size() < BACKLOG);

      assertThat(rest).as("messages not leased to the worker").hasSize(BACKLOG - STREAMS * LIMIT);
      assertThat(started).as("handlers started").hasValue(STREAMS);
      release.countDown();
    } finally {
      release.countDown();
    }
  }
}
