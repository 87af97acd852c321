package dev.pubsubworker.runtime.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.runtime.testing.TestPubSub;
import dev.pubsubworker.runtime.testing.WorkerHarness;
import dev.pubsubworker.testservices.SubscriptionSpec;
import dev.pubsubworker.testservices.TestServices;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;

/**
 * Two worker instances — separate processes in production, separate injectors and store clients
 * here — on one subscription and one shared lock store.
 */
class SharedStoreEndToEndTest {

  private static String redisStore() {
    return """
        pubsub-worker.lock-store {
          type = redis
          redis { uri = "%s", key-prefix = "%s:" }
        }
        """
        .formatted(TestServices.redis().uri(), TestServices.uniqueName("e2e"));
  }

  @Test
  void two_instances_with_many_duplicates_place_every_business_key_exactly_once() {
    RecordingHandler a =
        new RecordingHandler()
            .behave((m, ctx, call) -> LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5)));
    RecordingHandler b =
        new RecordingHandler()
            .behave((m, ctx, call) -> LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5)));
    OutcomeRecorder outcomes = new OutcomeRecorder();
    SubscriptionSpec spec =
        SubscriptionSpec.newBuilder()
            .setRetryPolicy(Duration.ofSeconds(1), Duration.ofSeconds(2))
            .build();
    // On Google's emulator, so that sharing one subscription is checked against it too; the
    // embedded server's spreading over streams has its own tests (PubSubScenarios in
    // pubsub-embedded, FairShareEndToEndTest).
    try (WorkerHarness h = new WorkerHarness(TestPubSub.googleEmulator(), spec)) {
      String store = redisStore();
      String settings = "key = \"template:orders:{id}\"\nexecutor-threads = 4";
      h.create(settings, store, a, List.of(outcomes)).start();
      h.create(settings, store, b, List.of(outcomes)).start();
      List<Integer> publishes = new ArrayList<>();
      for (int i = 0; i < 60; i++) {
        publishes.add(i);
        publishes.add(i); // every order published twice: a new message id, the same business key
        if (i % 3 == 0) {
          publishes.add(i);
        }
      }
      Collections.shuffle(publishes, new Random(7));
      for (int i : publishes) {
        h.publish("order " + i, Map.of("id", "po-" + i));
      }
      await()
          .atMost(Duration.ofSeconds(120))
          .until(() -> processed(outcomes) + duplicates(outcomes) == publishes.size());
      for (int i = 0; i < 60; i++) {
        assertThat(a.effects("po-" + i) + b.effects("po-" + i))
            .as("effects of po-%d", i)
            .isEqualTo(1);
      }
      assertThat(a.totalEffects()).isPositive();
      assertThat(b.totalEffects()).isPositive();
      assertThat(processed(outcomes)).isEqualTo(60);
      assertThat(duplicates(outcomes)).isEqualTo(publishes.size() - 60L);
      // Nothing is left unacked.
      assertThat(h.pubsub.pull(h.fixture.subscription(), 10, Duration.ofSeconds(2))).isEmpty();
    }
  }

  /** Handler runs, whether or not the delivery waited for its key first. */
  private static long processed(OutcomeRecorder outcomes) {
    return outcomes.count(Outcome.PROCESSED) + outcomes.count(Outcome.PARKED_THEN_PROCESSED);
  }

  /** Duplicates skipped, whether or not the delivery waited for its key first. */
  private static long duplicates(OutcomeRecorder outcomes) {
    return outcomes.count(Outcome.DUPLICATE) + outcomes.count(Outcome.PARKED_THEN_DUPLICATE);
  }
}
