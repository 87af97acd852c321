package dev.pubsubworker.runtime.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.runtime.store.LockStore;
import dev.pubsubworker.runtime.testing.WorkerHarness;
import dev.pubsubworker.runtime.worker.Worker;
import dev.pubsubworker.testservices.SubscriptionSpec;
import dev.pubsubworker.testservices.TestServices;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Parking end to end (issue 15): a real Subscriber on the embedded Pub/Sub server and a Redis lock
 * store. A delivery whose key is held waits outstanding instead of being nacked, so it spends no
 * delivery attempt; deliveries of one key wait in line in each process; a stop nacks the waiting
 * ones unrun; a holder that never lets go costs a nack only after {@code in-progress-max-wait}.
 */
class ParkingEndToEndTest {

  private static final Duration WAIT = Duration.ofSeconds(90);

  /** Outcomes, deliveries received, and the parked gauge, from one or more workers. */
  static final class Recorder extends OutcomeRecorder {
    final AtomicInteger received = new AtomicInteger();
    final AtomicInteger parked = new AtomicInteger();

    @Override
    public void received(String subscription) {
      received.incrementAndGet();
    }

    @Override
    public void parked(String subscription, int delta) {
      parked.addAndGet(delta);
    }

    long nacked() {
      return outcomes.stream().filter(o -> !o.acked()).count();
    }

    long processed() {
      return count(Outcome.PROCESSED) + count(Outcome.PARKED_THEN_PROCESSED);
    }
  }

  private static String redisStore() {
    return """
        pubsub-worker.lock-store {
          type = redis
          redis { uri = "%s", key-prefix = "%s:", command-timeout = 1s }
        }
        """
        .formatted(TestServices.redis().uri(), TestServices.uniqueName("park"));
  }

  private static Claim hold(LockStore store, String key, Duration lease) {
    ClaimResult r = store.backend().claim(ClaimRequest.of(key, lease, "crashed-holder"));
    assertThat(r).isInstanceOf(ClaimResult.Won.class);
    return ((ClaimResult.Won) r).claim();
  }

  @Test
  void fifty_deliveries_wait_out_a_crashed_holder_without_a_nack_or_a_second_attempt() {
    RecordingHandler handler = new RecordingHandler();
    Recorder outcomes = new Recorder();
    SubscriptionSpec spec =
        SubscriptionSpec.newBuilder()
            .setDeadLetterPolicy(5)
            .setRetryPolicy(Duration.ofSeconds(1), Duration.ofSeconds(2))
            .build();
    String settings = "key = \"attribute:id\"\nlease = 3s\nexecutor-threads = 4";
    String store = redisStore();
    try (WorkerHarness h = new WorkerHarness(spec);
        LockStore lockStore = LockStore.of(h.config(settings, store))) {
      // A worker claimed the key and died: its claim lapses with its 3 s lease, never completed.
      hold(lockStore, "test:po-1", Duration.ofSeconds(3));
      for (int i = 0; i < 50; i++) {
        h.publish("waiter " + i, Map.of("id", "po-1"));
      }
      h.create(settings, store, handler, List.of(outcomes)).start();

      await().atMost(WAIT).until(() -> outcomes.outcomes.size() == 50);
      // No redelivery follows: each message was delivered once and acked.
      await()
          .during(Duration.ofSeconds(2))
          .atMost(Duration.ofSeconds(10))
          .until(() -> outcomes.received.get() == 50 && outcomes.outcomes.size() == 50);
      assertThat(outcomes.nacked()).as("nacks").isZero();
      assertThat(outcomes.processed()).isEqualTo(1);
      assertThat(outcomes.count(Outcome.PARKED_THEN_DUPLICATE) + outcomes.count(Outcome.DUPLICATE))
          .isEqualTo(49);
      assertThat(outcomes.count(Outcome.PARKED_THEN_DUPLICATE)).isPositive();
      assertThat(handler.effects("po-1")).isEqualTo(1);
      assertThat(handler.attempts).containsExactly(1);
      assertThat(outcomes.parked).hasValue(0);
      assertThat(
              h.pubsub.pull(h.fixture.requireDeadLetterSubscription(), 10, Duration.ofSeconds(2)))
          .as("dead-lettered")
          .isEmpty();
      assertThat(h.pubsub.pull(h.fixture.subscription(), 10, Duration.ofSeconds(2))).isEmpty();
    }
  }

  @ParameterizedTest(name = "message ordering {0}")
  @ValueSource(booleans = {false, true})
  void a_hundred_messages_of_one_mutex_key_on_two_workers_run_one_at_a_time_without_nacks(
      boolean ordering) {
    AtomicInteger running = new AtomicInteger();
    List<String> overlaps = new CopyOnWriteArrayList<>();
    List<Integer> order = new CopyOnWriteArrayList<>();
    RecordingHandler.Behaviour tracked =
        (m, ctx, call) -> {
          if (running.incrementAndGet() > 1) {
            overlaps.add(m.messageId());
          }
          try {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
            order.add(Integer.parseInt(m.attribute("seq").orElseThrow()));
          } finally {
            running.decrementAndGet();
          }
        };
    RecordingHandler a = new RecordingHandler().behave(tracked);
    RecordingHandler b = new RecordingHandler().behave(tracked);
    Recorder outcomes = new Recorder();
    SubscriptionSpec spec =
        SubscriptionSpec.newBuilder()
            .setMessageOrdering(ordering)
            .setRetryPolicy(Duration.ofSeconds(1), Duration.ofSeconds(2))
            .build();
    // A small flow-control window, so the embedded server hands messages to both workers.
    String settings =
        """
        guard = mutex
        key = "attribute:acct"
        lease = 3s
        executor-threads = 4
        flow-control.max-outstanding-messages = 10
        """;
    try (WorkerHarness h = new WorkerHarness(spec)) {
      String store = redisStore();
      h.create(settings, store, a, List.of(outcomes)).start();
      h.create(settings, store, b, List.of(outcomes)).start();
      for (int i = 0; i < 100; i++) {
        h.pubsub.publish(
            h.fixture.topic(),
            PubsubMessage.newBuilder()
                .setData(ByteString.copyFrom("update " + i, StandardCharsets.UTF_8))
                .putAttributes("acct", "acct-1")
                .putAttributes("seq", Integer.toString(i))
                .setOrderingKey(ordering ? "acct-1" : "")
                .build());
      }
      await().atMost(WAIT).until(() -> order.size() >= 100 && outcomes.outcomes.size() >= 100);
      assertThat(overlaps).as("overlapping runs").isEmpty();
      assertThat(outcomes.nacked()).as("nacks").isZero();
      assertThat(outcomes.processed()).isEqualTo(100);
      assertThat(order)
          .containsExactlyInAnyOrderElementsOf(IntStream.range(0, 100).boxed().toList());
      if (ordering) {
        assertThat(order).containsExactlyElementsOf(IntStream.range(0, 100).boxed().toList());
      }
    }
  }

  @Test
  void a_stop_nacks_parked_deliveries_at_once_and_another_worker_processes_them() {
    AtomicInteger ranOnStopped = new AtomicInteger();
    RecordingHandler first =
        new RecordingHandler().behave((m, ctx, call) -> ranOnStopped.incrementAndGet());
    RecordingHandler second = new RecordingHandler();
    Recorder before = new Recorder();
    Recorder after = new Recorder();
    SubscriptionSpec spec =
        SubscriptionSpec.newBuilder()
            .setRetryPolicy(Duration.ofSeconds(1), Duration.ofSeconds(2))
            .build();
    String settings = "key = \"attribute:id\"\nlease = 3s";
    String store = redisStore();
    try (WorkerHarness h = new WorkerHarness(spec);
        LockStore lockStore = LockStore.of(h.config(settings, store))) {
      Claim holder = hold(lockStore, "test:po-9", Duration.ofMinutes(5));
      Worker stopping = h.create(settings, store, first, List.of(before));
      stopping.start();
      for (int i = 0; i < 5; i++) {
        h.publish("parked " + i, Map.of("id", "po-9"));
      }
      await().atMost(WAIT).until(() -> before.parked.get() == 5);

      stopping.stop();
      assertThat(before.outcomes).hasSize(5).containsOnly(Outcome.REFUSED_AT_SHUTDOWN);
      assertThat(before.parked).hasValue(0);
      assertThat(ranOnStopped).hasValue(0);

      // Nothing is lost: once the holder lets go, another worker gets all five.
      lockStore.backend().release(holder);
      h.create(settings, store, second, List.of(after)).start();
      await().atMost(WAIT).until(() -> after.outcomes.stream().filter(Outcome::acked).count() == 5);
      assertThat(second.effects("po-9")).isEqualTo(1);
      assertThat(ranOnStopped).hasValue(0);
    }
  }

  @Test
  void a_holder_that_keeps_extending_costs_the_waiter_a_nack_after_the_max_wait() {
    RecordingHandler handler = new RecordingHandler();
    Recorder outcomes = new Recorder();
    SubscriptionSpec spec =
        SubscriptionSpec.newBuilder()
            .setRetryPolicy(Duration.ofSeconds(1), Duration.ofSeconds(2))
            .build();
    String settings = "key = \"attribute:id\"\nlease = 3s\nin-progress-max-wait = 2s";
    String store = redisStore();
    ScheduledExecutorService heartbeat = Executors.newSingleThreadScheduledExecutor();
    try (WorkerHarness h = new WorkerHarness(spec);
        LockStore lockStore = LockStore.of(h.config(settings, store))) {
      Claim holder = hold(lockStore, "test:po-5", Duration.ofSeconds(3));
      // A live holder whose handler never ends: its heartbeat extends the lease forever.
      heartbeat.scheduleAtFixedRate(
          () -> lockStore.backend().extend(holder, Duration.ofSeconds(3)), 1, 1, TimeUnit.SECONDS);
      h.create(settings, store, handler, List.of(outcomes)).start();
      h.publish("waiter", Map.of("id", "po-5"));

      await().atMost(WAIT).until(() -> outcomes.count(Outcome.PARKED_TIMEOUT) >= 1);
      assertThat(handler.calls).hasValue(0);
      assertThat(outcomes.outcomes).containsOnly(Outcome.PARKED_TIMEOUT);

      heartbeat.shutdownNow();
      lockStore.backend().release(holder);
      await().atMost(WAIT).until(() -> outcomes.processed() == 1);
      assertThat(handler.effects("po-5")).isEqualTo(1);
    } finally {
      heartbeat.shutdownNow();
    }
  }
}
