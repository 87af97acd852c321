package dev.pubsubworker.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.ReceivedMessage;
import com.google.pubsub.v1.Subscription;
import com.google.pubsub.v1.SubscriptionName;
import com.google.pubsub.v1.TopicName;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.LockState;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.store.LockStore;
import dev.pubsubworker.runtime.testing.TestPubSub;
import dev.pubsubworker.testservices.PubSubEmulator;
import dev.pubsubworker.testservices.TestServices;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code redrive} command through its picocli entry point, against a Redis store and the
 * embedded Pub/Sub with the test class path's {@code orders} handler: its summary line and exit
 * codes, and one clear line for bad input.
 */
class RedriveCommandTest {

  @TempDir Path dir;

  private final PubSubEmulator pubsub = TestPubSub.embedded();
  private Path config;
  private TopicName deadLetterTopic;
  private SubscriptionName deadLetters;

  @BeforeEach
  void setUp() throws IOException {
    deadLetterTopic = pubsub.createTopic("orders_dead");
    deadLetters = SubscriptionName.of(pubsub.projectId(), TestServices.uniqueName("orders_dead"));
    pubsub
        .subscriptionAdmin()
        .createSubscription(
            Subscription.newBuilder()
                .setName(deadLetters.toString())
                .setTopic(deadLetterTopic.toString())
                .setAckDeadlineSeconds(10)
                .build());
    config = dir.resolve("worker.conf");
    Files.writeString(
        config,
        """
        pubsub-worker {
          project-id = "%s"
          pubsub-emulator-host = "%s"
          lock-store { type = redis, redis { uri = "%s", key-prefix = "%s:" } }
          subscriptions {
            orders { name = orders-sub, handler = orders, key = "attribute:order_id" }
          }
        }
        """
            .formatted(
                pubsub.projectId(),
                pubsub.hostPort(),
                TestServices.redis().uri(),
                TestServices.uniqueName("redrive_cli")));
  }

  private LockStore store() {
    return LockStore.of(WorkerConfig.loadFile(config, getClass().getClassLoader()));
  }

  /** Claims and completes {@code key}: its effect ran. */
  private void done(String key) {
    try (LockStore store = store()) {
      ClaimResult r = store.backend().claim(ClaimRequest.of(key, Duration.ofSeconds(30), "t-1"));
      assertThat(store.backend().complete(((ClaimResult.Won) r).claim(), Duration.ofHours(1)))
          .isTrue();
    }
  }

  private void letter(Map<String, String> attributes) {
    pubsub.publish(
        deadLetterTopic,
        PubsubMessage.newBuilder()
            .setData(ByteString.copyFrom("{}", StandardCharsets.UTF_8))
            .putAttributes(
                "pubsub-worker-subscription",
                "projects/" + pubsub.projectId() + "/subscriptions/orders-sub")
            .putAttributes(
                "pubsub-worker-error-class", "dev.pubsubworker.api.PoisonMessageException")
            .putAllAttributes(attributes) // over the defaults above
            .build());
  }

  private CliRun redrive(String... more) {
    return CliRun.of(redriveArgs(more));
  }

  private String[] redriveArgs(String... more) {
    String[] base = {"redrive", "--subscription", "orders", "--config", config.toString()};
    String[] args = new String[base.length + more.length];
    System.arraycopy(base, 0, args, 0, base.length);
    System.arraycopy(more, 0, args, base.length, more.length);
    return args;
  }

  @Test
  void redrive_runs_new_keys_acks_done_ones_as_duplicates_and_prints_the_summary() {
    done("orders:po-1");
    letter(Map.of("order_id", "po-1", "pubsub-worker-message-id", "m-1"));
    letter(Map.of("order_id", "po-2", "pubsub-worker-message-id", "m-2"));
    letter(Map.of("order_id", "po-3", "pubsub-worker-message-id", "m-3"));

    CliRun dry = redrive("--from", deadLetters.getSubscription(), "--dry-run");
    assertThat(dry.exitCode()).isZero();
    assertThat(dry.out())
        .contains("(original m-1), key orders:po-1: duplicate (DONE)")
        .contains("(original m-2), key orders:po-2: would run")
        .endsWith(
            "redrive --dry-run of orders from "
                + deadLetters
                + ": 3 read, 2 would run, 1 duplicate(s), 0 without a key, 0 left; nothing"
                + " claimed, nothing acked"
                + System.lineSeparator());
    try (LockStore store = store()) {
      assertThat(store.admin().inspect("orders:po-2")).isEmpty();
    }

    CliRun run = redrive("--from", deadLetters.toString());
    assertThat(run.exitCode()).isZero();
    assertThat(run.out())
        .isEqualTo(
            "redrive of orders from "
                + deadLetters
                + ": 3 read, 2 redriven, 1 duplicate(s), 0 failed again (0 terminal), 0 left"
                + System.lineSeparator());
    try (LockStore store = store()) {
      assertThat(store.admin().inspect("orders:po-2").orElseThrow().state())
          .isEqualTo(LockState.DONE);
      assertThat(store.admin().inspect("orders:po-3").orElseThrow().state())
          .isEqualTo(LockState.DONE);
    }
    assertThat(redrive("--from", deadLetters.toString()).out()).contains(": 0 read");
  }

  @Test
  void a_letter_that_fails_again_stays_and_the_exit_code_says_so() {
    letter(Map.of("pubsub-worker-message-id", "m-9")); // no order_id: no key, terminal again
    letter(Map.of("order_id", "po-8", "pubsub-worker-message-id", "m-8", "tenant", "a"));
    CliRun filtered = redrive("--from", deadLetters.toString(), "--filter", "tenant=a");
    assertThat(filtered.exitCode()).isZero();
    assertThat(filtered.out())
        .contains(": 2 read, 1 redriven, 0 duplicate(s), 0 failed again (0 terminal), 1 left");

    // Another subscription's letter stays unless --any-source.
    letter(
        Map.of(
            "order_id",
            "po-7",
            "pubsub-worker-subscription",
            "projects/" + pubsub.projectId() + "/subscriptions/elsewhere"));
    CliRun run = redrive("--from", deadLetters.toString());
    assertThat(run.exitCode()).isEqualTo(ExitCodes.FAILED_AGAIN);
    assertThat(run.out())
        .contains(": 2 read, 0 redriven, 0 duplicate(s), 1 failed again (1 terminal), 1 left");
    CliRun any =
        redrive("--from", deadLetters.toString(), "--any-source", "--filter", "order_id=po-7");
    assertThat(any.exitCode()).isZero();
    assertThat(any.out())
        .contains(": 2 read, 1 redriven, 0 duplicate(s), 0 failed again (0 terminal), 1 left");

    run = redrive("--from", deadLetters.toString());
    assertThat(run.exitCode()).isEqualTo(ExitCodes.FAILED_AGAIN);
    assertThat(run.out())
        .contains(": 1 read, 0 redriven, 0 duplicate(s), 1 failed again (1 terminal), 0 left");
    // Nothing lost: it is still there.
    assertThat(redrive("--from", deadLetters.toString(), "--dry-run").out())
        .contains("(original m-9): no key, would fail again (terminal) and stay");
  }

  @Test
  void forget_asks_first_and_then_runs_done_keys_again() {
    done("orders:po-1");
    letter(Map.of("order_id", "po-1", "pubsub-worker-message-id", "m-1"));
    letter(Map.of("order_id", "po-2", "pubsub-worker-message-id", "m-2"));

    CliRun dry = redrive("--from", deadLetters.toString(), "--forget", "--dry-run");
    assertThat(dry.exitCode()).isZero();
    assertThat(dry.out())
        .contains("key orders:po-1: DONE, would be forgotten and run again (--forget)")
        .contains(": 2 read, 2 would run (1 after forgetting their DONE record), 0 duplicate(s)");

    CliRun declined =
        CliRun.withInput("n\n", redriveArgs("--from", deadLetters.toString(), "--forget"));
    assertThat(declined.exitCode()).isEqualTo(ExitCodes.FAILURE);
    assertThat(declined.out())
        .contains(
            "Forget the DONE record of every key among at most 1000 dead letter(s) of "
                + deadLetters)
        .endsWith("not redriven" + System.lineSeparator());
    try (LockStore store = store()) {
      assertThat(store.admin().inspect("orders:po-1").orElseThrow().state())
          .isEqualTo(LockState.DONE); // untouched
      assertThat(store.admin().inspect("orders:po-2")).isEmpty(); // nothing read
    }
    CliRun noAnswer =
        CliRun.withInput("", redriveArgs("--from", deadLetters.toString(), "--forget"));
    assertThat(noAnswer.exitCode()).isEqualTo(ExitCodes.FAILURE);

    CliRun yes = CliRun.withInput("y\n", redriveArgs("--from", deadLetters.toString(), "--forget"));
    assertThat(yes.exitCode()).isZero();
    assertThat(yes.out())
        .endsWith(
            "redrive of orders from "
                + deadLetters
                + ": 2 read, 2 redriven, 0 duplicate(s), 1 forgotten first, 0 failed again (0"
                + " terminal), 0 left"
                + System.lineSeparator());
    try (LockStore store = store()) {
      assertThat(store.admin().inspect("orders:po-1").orElseThrow().state())
          .isEqualTo(LockState.DONE);
    }
    // Both ran and are DONE again: without --forget, both are duplicates now.
    letter(Map.of("order_id", "po-1", "pubsub-worker-message-id", "m-1"));
    assertThat(redrive("--from", deadLetters.toString(), "--yes", "--dry-run").out())
        .contains(": 1 read, 0 would run, 1 duplicate(s)");
  }

  @Test
  void republish_sends_the_originals_back_to_the_topic_and_acks_the_letters() {
    TopicName orders = pubsub.createTopic("orders");
    SubscriptionName ordersSub =
        SubscriptionName.of(pubsub.projectId(), TestServices.uniqueName("orders_sub"));
    pubsub
        .subscriptionAdmin()
        .createSubscription(
            Subscription.newBuilder()
                .setName(ordersSub.toString())
                .setTopic(orders.toString())
                .setAckDeadlineSeconds(10)
                .build());
    letter(
        Map.of(
            "order_id",
            "po-5",
            "pubsub-worker-message-id",
            "m-5",
            "pubsub-worker-publish-time",
            "2026-01-02T03:04:05Z",
            "googclient_deliveryattempt",
            "5"));

    CliRun dry =
        redrive(
            "--from",
            deadLetters.toString(),
            "--republish",
            "--topic",
            orders.getTopic(),
            "--dry-run");
    assertThat(dry.exitCode()).isZero();
    assertThat(dry.out())
        .contains("(original m-5): would be republished to " + orders)
        .contains(
            "redrive --republish --dry-run of orders from "
                + deadLetters
                + " to "
                + orders
                + ": 1 read, 1 would be republished, 0 left; nothing published, nothing acked");
    assertThat(pubsub.pull(ordersSub, 10, Duration.ofSeconds(1))).isEmpty();

    CliRun run = redrive("--from", deadLetters.toString(), "--topic", orders.toString());
    assertThat(run.exitCode()).isZero();
    assertThat(run.out())
        .isEqualTo(
            "redrive --republish of orders from "
                + deadLetters
                + " to "
                + orders
                + ": 1 read, 1 republished, 0 failed again, 0 left"
                + System.lineSeparator());
    List<ReceivedMessage> back = pubsub.pull(ordersSub, 10, Duration.ofSeconds(5));
    assertThat(back).hasSize(1);
    PubsubMessage m = back.get(0).getMessage();
    assertThat(m.getAttributesMap())
        .containsEntry("order_id", "po-5")
        .containsEntry("pubsub-worker-message-id", "m-5")
        .containsEntry("pubsub-worker-publish-time", "2026-01-02T03:04:05Z")
        .doesNotContainKeys(
            "pubsub-worker-subscription",
            "pubsub-worker-error-class",
            "googclient_deliveryattempt");
    assertThat(m.getMessageId()).isNotEqualTo("m-5");
    assertThat(m.getData().toStringUtf8()).isEqualTo("{}");
    // The letter was acked: nothing is left to redrive.
    assertThat(redrive("--from", deadLetters.toString(), "--dry-run").out()).contains(": 0 read");

    // Without --topic, the subscription's own topic; orders-sub does not exist here.
    letter(Map.of("order_id", "po-6"));
    CliRun noSub = redrive("--from", deadLetters.toString(), "--republish");
    assertThat(noSub.exitCode()).isEqualTo(ExitCodes.UNAVAILABLE);
    assertThat(noSub.err().lines().findFirst().orElseThrow())
        .startsWith(
            "error: subscription projects/"
                + pubsub.projectId()
                + "/subscriptions/orders-sub does not exist: pass --topic to name the topic");
  }

  @Test
  void bad_input_is_one_clear_line() {
    CliRun unknown =
        CliRun.of(
            "redrive",
            "--subscription",
            "nope",
            "--from",
            deadLetters.toString(),
            "--config",
            config.toString());
    assertThat(unknown.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(unknown.err())
        .isEqualTo(
            "error: no subscription 'nope' in the config (configured: orders)"
                + System.lineSeparator());

    CliRun noSource = redrive();
    assertThat(noSource.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(noSource.err())
        .isEqualTo(
            "error: no dead-letter subscription to read: pass --from DL_SUBSCRIPTION, or set"
                + " pubsub-worker.subscriptions.orders.dead-letter-subscription"
                + System.lineSeparator());

    CliRun missing = redrive("--from", "no-such-dead-letters");
    assertThat(missing.exitCode()).isEqualTo(ExitCodes.UNAVAILABLE);
    assertThat(missing.err().lines().findFirst().orElseThrow())
        .startsWith(
            "error: dead-letter subscription projects/"
                + pubsub.projectId()
                + "/subscriptions/no-such-dead-letters does not exist");

    CliRun badFilter = redrive("--from", deadLetters.toString(), "--filter", "tenant");
    assertThat(badFilter.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(badFilter.err())
        .isEqualTo("error: --filter must be NAME=VALUE, but was 'tenant'" + System.lineSeparator());

    CliRun badMax = redrive("--from", deadLetters.toString(), "--max", "0");
    assertThat(badMax.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(badMax.err())
        .isEqualTo("error: --max must be at least 1, but was 0" + System.lineSeparator());

    CliRun forgetRepublish = redrive("--from", deadLetters.toString(), "--forget", "--republish");
    assertThat(forgetRepublish.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(forgetRepublish.err())
        .startsWith("error: --forget and --republish do not go together");
  }
}
