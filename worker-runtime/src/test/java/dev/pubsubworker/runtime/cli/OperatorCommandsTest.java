package dev.pubsubworker.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.pubsub.v1.ReceivedMessage;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.store.LockStore;
import dev.pubsubworker.runtime.testing.TestPubSub;
import dev.pubsubworker.testservices.PubSubEmulator;
import dev.pubsubworker.testservices.SubscriptionFixture;
import dev.pubsubworker.testservices.SubscriptionSpec;
import dev.pubsubworker.testservices.TestServices;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** inspect, forget, purge and publish against a real Redis store and the embedded Pub/Sub. */
class OperatorCommandsTest {

  @TempDir Path dir;

  private Path config;
  private final PubSubEmulator pubsub = TestPubSub.embedded();

  @BeforeEach
  void writeConfig() throws IOException {
    config = dir.resolve("worker.conf");
    Files.writeString(
        config,
        """
        pubsub-worker {
          project-id = "%s"
          pubsub-emulator-host = "%s"
          lock-store { type = redis, redis { uri = "%s", key-prefix = "%s:" } }
          subscriptions { orders { handler = orders } }
        }
        """
            .formatted(
                pubsub.projectId(),
                pubsub.hostPort(),
                TestServices.redis().uri(),
                TestServices.uniqueName("ops")));
  }

  private LockStore store() {
    return LockStore.of(WorkerConfig.loadFile(config, getClass().getClassLoader()));
  }

  private void done(String key, Duration ttl) {
    try (LockStore store = store()) {
      ClaimResult r =
          store.backend().claim(ClaimRequest.of(key, Duration.ofSeconds(30), "t-" + key));
      assertThat(store.backend().complete(((ClaimResult.Won) r).claim(), ttl)).isTrue();
    }
  }

  @Test
  void inspect_shows_a_record_in_human_and_json_form_and_says_when_there_is_none() {
    done("orders:po-1", Duration.ofHours(1));
    CliRun human = CliRun.of("inspect", "orders:po-1", "--config", config.toString());
    assertThat(human.exitCode()).isZero();
    assertThat(human.out())
        .contains("key:          orders:po-1")
        .contains("state:        DONE")
        .contains("fence:        1")
        .contains("no: deliveries are duplicates until it expires");
    CliRun json = CliRun.of("inspect", "orders:po-1", "--json", "--config", config.toString());
    assertThat(json.out()).startsWith("{\"key\":\"orders:po-1\",\"state\":\"DONE\",\"fence\":1,");
    CliRun none = CliRun.of("inspect", "orders:none", "--config", config.toString());
    assertThat(none.out()).contains("no record for this key");
  }

  @Test
  void subscription_puts_the_key_under_that_subscriptions_namespace() {
    done("orders:po-3", Duration.ofHours(1));
    CliRun byKey =
        CliRun.of("inspect", "--subscription", "orders", "po-3", "--config", config.toString());
    assertThat(byKey.exitCode()).isZero();
    assertThat(byKey.out()).contains("key:          orders:po-3").contains("state:        DONE");
    CliRun forget =
        CliRun.of("forget", "-s", "orders", "po-3", "--yes", "--config", config.toString());
    assertThat(forget.out()).contains("forgotten");
    try (LockStore store = store()) {
      assertThat(store.admin().inspect("orders:po-3")).isEmpty();
    }
    CliRun unknown =
        CliRun.of("inspect", "--subscription", "audit", "po-3", "--config", config.toString());
    assertThat(unknown.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(unknown.err())
        .startsWith("error: --subscription audit is not configured; subscriptions: orders");
  }

  @Test
  void forget_asks_for_confirmation_and_then_deletes() {
    done("orders:po-2", Duration.ofHours(1));
    CliRun declined =
        CliRun.withInput("n\n", "forget", "orders:po-2", "--config", config.toString());
    assertThat(declined.exitCode()).isEqualTo(ExitCodes.FAILURE);
    assertThat(declined.out()).contains("Forget this key?").contains("not forgotten");
    try (LockStore store = store()) {
      assertThat(store.admin().inspect("orders:po-2")).isPresent();
    }
    CliRun accepted =
        CliRun.withInput("yes\n", "forget", "orders:po-2", "--config", config.toString());
    assertThat(accepted.exitCode()).isZero();
    assertThat(accepted.out()).contains("forgotten: the next delivery for this key runs again");
    try (LockStore store = store()) {
      assertThat(store.admin().inspect("orders:po-2")).isEmpty();
    }
    CliRun yes = CliRun.of("forget", "orders:po-2", "--yes", "--config", config.toString());
    assertThat(yes.out()).contains("nothing to forget");
  }

  @Test
  void purge_removes_expired_records_in_batches_and_keeps_live_ones() {
    for (int i = 0; i < 5; i++) {
      done("orders:expired-" + i, Duration.ofMillis(1));
    }
    done("orders:live", Duration.ofHours(1));
    Claim live;
    try (LockStore store = store()) {
      live =
          ((ClaimResult.Won)
                  store
                      .backend()
                      .claim(ClaimRequest.of("orders:claimed", Duration.ofMinutes(5), "t")))
              .claim();
    }
    CliRun run = CliRun.of("purge", "--batch-size", "2", "--config", config.toString());
    assertThat(run.exitCode()).isZero();
    // Redis reaps expired records by itself (PEXPIREAT), so purge may find fewer than 5 left.
    assertThat(run.out()).containsPattern("purged [0-5] expired record\\(s\\)");
    try (LockStore store = store()) {
      assertThat(store.admin().inspect("orders:live")).isPresent();
      assertThat(store.admin().inspect(live.key())).isPresent();
      assertThat(store.admin().inspect("orders:expired-0")).isEmpty();
    }
  }

  @Test
  void a_store_that_cannot_be_reached_is_one_line_and_exit_3() throws IOException {
    Files.writeString(
        config,
        Files.readString(config).replace(TestServices.redis().uri(), "redis://127.0.0.1:9"));
    CliRun run = CliRun.of("inspect", "orders:x", "--config", config.toString());
    assertThat(run.exitCode()).isEqualTo(ExitCodes.UNAVAILABLE);
    assertThat(run.err())
        .startsWith("error: lock store redis redis://127.0.0.1:9: inspect failed on redis prefix")
        .doesNotContain("\tat ");
  }

  @Test
  void publish_sends_numbered_messages_and_duplicate_publishes() {
    SubscriptionFixture fixture = pubsub.createSubscription(SubscriptionSpec.defaults());
    CliRun run =
        CliRun.of(
            "publish",
            "--config",
            config.toString(),
            "--topic",
            fixture.topic().getTopic(),
            "--data",
            "{\"orderId\":\"po-{n}\"}",
            "-a",
            "order_id=po-{n}",
            "--count",
            "5",
            "--duplicates",
            "0.4");
    assertThat(run.exitCode()).isZero();
    assertThat(run.out()).contains("published 5 message(s) and 2 duplicate publish(es)");
    Set<String> ids = new HashSet<>();
    int received = 0;
    for (int round = 0; round < 10 && received < 7; round++) {
      List<ReceivedMessage> got = pubsub.pull(fixture.subscription(), 10, Duration.ofSeconds(3));
      received += got.size();
      got.forEach(m -> ids.add(m.getMessage().getAttributesOrThrow("order_id")));
      pubsub.acknowledge(
          fixture.subscription(), got.stream().map(ReceivedMessage::getAckId).toList());
    }
    assertThat(received).isEqualTo(7);
    assertThat(ids).containsExactlyInAnyOrder("po-1", "po-2", "po-3", "po-4", "po-5");
  }
}
