package dev.pubsubworker.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import dev.pubsubworker.runtime.testing.CliProcess;
import dev.pubsubworker.runtime.testing.TestPubSub;
import dev.pubsubworker.testservices.PubSubEmulator;
import dev.pubsubworker.testservices.SubscriptionFixture;
import dev.pubsubworker.testservices.SubscriptionSpec;
import dev.pubsubworker.testservices.TcpProxy;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code run} as a real process: start, process, SIGTERM, exit codes. */
class RunCommandProcessTest {

  @TempDir Path dir;

  private Process start(Path config, Path log) throws IOException {
    return CliProcess.builder(log, "run", "--config", config.toString()).start();
  }

  @Test
  void a_worker_processes_messages_and_exits_0_after_sigterm() throws Exception {
    PubSubEmulator pubsub = TestPubSub.embedded();
    SubscriptionFixture fixture = pubsub.createSubscription(SubscriptionSpec.defaults());
    Path config = dir.resolve("worker.conf");
    Files.writeString(
        config,
        """
        pubsub-worker {
          project-id = "%s"
          pubsub-emulator-host = "%s"
          shutdown-grace = 5s
          subscriptions {
            orders { name = "%s", handler = orders, key = "template:orders:{order_id}" }
          }
        }
        """
            .formatted(
                pubsub.projectId(), pubsub.hostPort(), fixture.subscription().getSubscription()));
    Path log = dir.resolve("worker.log");
    Process worker = start(config, log);
    try {
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> Files.readString(log).contains("worker started"));
      for (String id : List.of("po-1", "po-2", "po-1")) {
        pubsub.publish(
            fixture.topic(),
            PubsubMessage.newBuilder()
                .setData(
                    ByteString.copyFrom(
                        "{\"orderId\":\"" + id + "\",\"sku\":\"A\",\"quantity\":1}",
                        StandardCharsets.UTF_8))
                .putAttributes("order_id", id)
                .build());
      }
      await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () ->
                  Files.readString(log).contains("placed order po-1")
                      && Files.readString(log).contains("placed order po-2"));
      worker.destroy(); // SIGTERM
      assertThat(worker.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(worker.exitValue()).isZero();
      String output = Files.readString(log);
      assertThat(output).contains("stopping gracefully").contains("worker stopped");
      assertThat(output.split("placed order po-1", -1)).hasSize(2);
    } finally {
      worker.destroyForcibly();
    }
  }

  @Test
  void a_bad_config_exits_2_with_one_line_per_problem_without_touching_pubsub() throws Exception {
    Path config = dir.resolve("bad.conf");
    Files.writeString(
        config,
        """
        pubsub-worker {
          project-id = shop
          pubsub-emulator-host = "127.0.0.1:9"
          lock-store.type = cassandra
          subscriptions { orders { handler = orders, ttl = 0s } }
        }
        """);
    Path log = dir.resolve("bad.log");
    Process worker = start(config, log);
    assertThat(worker.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(worker.exitValue()).isEqualTo(ExitCodes.BAD_CONFIG);
    String output = Files.readString(log);
    assertThat(output)
        .contains("error: 2 configuration problems")
        .contains(
            "pubsub-worker.lock-store.type: must be one of in-memory | redis | sql | datastore, but"
                + " was 'cassandra' ("
                + config
                + ":4)")
        .contains(
            "pubsub-worker.subscriptions.orders.ttl: must be a positive duration, but was '0s'")
        .doesNotContain("\tat ")
        .doesNotContain("subscriber");
  }

  @Test
  void a_missing_subscription_exits_3_with_one_line() throws Exception {
    PubSubEmulator pubsub = TestPubSub.embedded();
    Path config = dir.resolve("missing.conf");
    Files.writeString(
        config,
        """
        pubsub-worker {
          project-id = "%s"
          pubsub-emulator-host = "%s"
          subscriptions { orders { name = does-not-exist, handler = orders } }
        }
        """
            .formatted(pubsub.projectId(), pubsub.hostPort()));
    Path log = dir.resolve("missing.log");
    Process worker = start(config, log);
    assertThat(worker.waitFor(90, TimeUnit.SECONDS)).isTrue();
    assertThat(worker.exitValue()).isEqualTo(ExitCodes.UNAVAILABLE);
    assertThat(Files.readString(log))
        .contains(
            "error: subscription orders: projects/"
                + pubsub.projectId()
                + "/subscriptions/does-not-exist does not exist")
        .doesNotContain("\tat ");
  }

  @Test
  void a_subscription_deleted_while_running_exits_3_with_one_line() throws Exception {
    PubSubEmulator pubsub = TestPubSub.embedded();
    SubscriptionFixture fixture = pubsub.createSubscription(SubscriptionSpec.defaults());
    Path log = dir.resolve("deleted.log");
    Process worker =
        startAndAwaitPulling(plainConfig("deleted", pubsub, pubsub.hostPort(), fixture), log);
    try {
      pubsub.subscriptionAdmin().deleteSubscription(fixture.subscription());
      assertThat(worker.waitFor(90, TimeUnit.SECONDS)).isTrue();
      assertThat(worker.exitValue()).as(Files.readString(log)).isEqualTo(ExitCodes.UNAVAILABLE);
      List<String> errors =
          Files.readString(log).lines().filter(l -> l.startsWith("error: ")).toList();
      assertThat(errors)
          .containsExactly(
              "error: subscription orders: "
                  + fixture.subscription()
                  + " no longer exists (it did at start-up); the worker stopped: NOT_FOUND:"
                  + " Subscription does not exist");
    } finally {
      worker.destroyForcibly();
    }
  }

  @Test
  void sighup_stops_gracefully_as_sigterm_does_and_exits_0() throws Exception {
    PubSubEmulator pubsub = TestPubSub.embedded();
    SubscriptionFixture fixture = pubsub.createSubscription(SubscriptionSpec.defaults());
    Path log = dir.resolve("hup.log");
    Process worker =
        startAndAwaitPulling(plainConfig("hup", pubsub, pubsub.hostPort(), fixture), log);
    try {
      signal(worker, "HUP");
      assertThat(worker.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(worker.exitValue()).as(Files.readString(log)).isZero();
      assertThat(Files.readString(log)).contains("stopping gracefully").contains("worker stopped");
    } finally {
      worker.destroyForcibly();
    }
  }

  @Test
  void sigterm_during_start_up_ends_the_start_and_exits_0() throws Exception {
    PubSubEmulator pubsub = TestPubSub.embedded();
    SubscriptionFixture fixture = pubsub.createSubscription(SubscriptionSpec.defaults());
    // Pub/Sub stops answering: the start hangs reading the subscription (a 60 s admin call).
    try (TcpProxy frozen = TcpProxy.start(pubsub.hostPort())) {
      frozen.freeze();
      Path log = dir.resolve("starting.log");
      Process worker = start(plainConfig("starting", pubsub, frozen.hostPort(), fixture), log);
      try {
        await()
            .atMost(Duration.ofSeconds(60))
            .until(() -> Files.readString(log).contains("starting: opening the lock store"));
        worker.destroy(); // SIGTERM
        assertThat(worker.waitFor(20, TimeUnit.SECONDS))
            .as("the start ends at once: its Pub/Sub call is cancelled")
            .isTrue();
        String output = Files.readString(log);
        assertThat(worker.exitValue()).as(output).isZero();
        assertThat(output)
            .contains("stopped during start-up by a signal: nothing was pulled")
            .doesNotContain("error:")
            .doesNotContain("worker started")
            .doesNotContain("\tat ");
      } finally {
        worker.destroyForcibly();
      }
    }
  }

  /**
   * A config for subscription {@code orders} on {@code fixture}, reaching Pub/Sub at {@code
   * pubsubHost}, without the HTTP server.
   */
  private Path plainConfig(
      String name, PubSubEmulator pubsub, String pubsubHost, SubscriptionFixture fixture)
      throws IOException {
    Path config = dir.resolve(name + ".conf");
    Files.writeString(
        config,
        """
        pubsub-worker {
          project-id = "%s"
          pubsub-emulator-host = "%s"
          observability.http-port = 0
          subscriptions { orders { name = "%s", handler = orders } }
        }
        """
            .formatted(pubsub.projectId(), pubsubHost, fixture.subscription().getSubscription()));
    return config;
  }

  /** Starts {@code run} on {@code config}; returns once the worker pulls. */
  private Process startAndAwaitPulling(Path config, Path log) throws IOException {
    Process worker = start(config, log);
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> Files.readString(log).contains("worker started"));
    return worker;
  }

  private static void signal(Process process, String name) throws Exception {
    Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).start();
    assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(kill.exitValue()).isZero();
  }
}
