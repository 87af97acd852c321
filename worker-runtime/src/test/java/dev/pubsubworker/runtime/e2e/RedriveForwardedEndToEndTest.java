package dev.pubsubworker.runtime.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.pubsubworker.core.LockState;
import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.runtime.pubsub.RedriveRequest;
import dev.pubsubworker.runtime.pubsub.RedriveSummary;
import dev.pubsubworker.runtime.testing.WorkerHarness;
import dev.pubsubworker.runtime.worker.Worker;
import dev.pubsubworker.testservices.SubscriptionSpec;
import dev.pubsubworker.testservices.TestServices;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * A letter Pub/Sub's own dead-letter policy forwarded (a new message id, the original one kept
 * nowhere) is redriven with a {@code message-id} key on the letter's own id, as documented: it runs
 * once, and the original id's record is left as it was.
 */
class RedriveForwardedEndToEndTest {

  private static final Duration WAIT = Duration.ofSeconds(60);

  @Test
  void a_forwarded_letter_with_a_message_id_key_is_keyed_by_the_letters_own_id() {
    RecordingHandler handler = new RecordingHandler();
    handler.behave(
        (m, ctx, call) -> {
          throw new IllegalStateException("the supplier is down");
        });
    OutcomeRecorder outcomes = new OutcomeRecorder();
    try (WorkerHarness h =
        new WorkerHarness(SubscriptionSpec.newBuilder().setDeadLetterPolicy(5).build())) {
      String store =
          """
          pubsub-worker.lock-store {
            type = redis
            redis { uri = "%s", key-prefix = "%s:" }
          }
          """
              .formatted(TestServices.redis().uri(), TestServices.uniqueName("forwarded"));
      Worker worker =
          h.create(
              "key = \"message-id\"\ndead-letter-subscription = \""
                  + h.fixture.requireDeadLetterSubscription()
                  + "\"",
              store,
              handler,
              List.of(outcomes));
      worker.start();
      String original = h.publish("order", Map.of("id", "po-1"));
      // Five failed attempts, then Pub/Sub forwards it to the dead-letter topic itself.
      await().atMost(WAIT).until(() -> outcomes.count(Outcome.FAILED) >= 5);
      // The dry run names the key each letter would run under.
      List<String> lines = new java.util.concurrent.CopyOnWriteArrayList<>();
      await()
          .atMost(WAIT)
          .until(
              () -> {
                lines.clear();
                return worker
                        .redrive(
                            RedriveRequest.builder("test").max(10).dryRun(true).build(),
                            Optional.empty(),
                            lines::add)
                        .read()
                    == 1;
              });
      String line = lines.get(0);
      String letterId = line.substring("dead letter ".length(), line.indexOf(' ', 12));
      assertThat(letterId).isNotEqualTo(original);
      assertThat(line)
          .isEqualTo(
              "dead letter "
                  + letterId
                  + " (original "
                  + letterId
                  + "), key test:"
                  + letterId
                  + ": would run");

      handler.behave((m, ctx, call) -> {});
      RedriveSummary summary =
          worker.redrive(RedriveRequest.builder("test").max(10).build(), Optional.empty(), l -> {});
      assertThat(summary.redriven()).isEqualTo(1);
      assertThat(handler.effects("po-1")).isEqualTo(1);
      // Keyed by the letter's own id; the original id's record is as the failures left it.
      assertThat(worker.admin().inspect("test:" + letterId).orElseThrow().state())
          .isEqualTo(LockState.DONE);
      assertThat(worker.admin().inspect("test:" + original).orElseThrow().state())
          .isEqualTo(LockState.CLAIMED);
      assertThat(summary.line()).contains("1 redriven");
    }
  }
}
