package dev.pubsubworker.runtime.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.runtime.cli.WorkerCli;
import dev.pubsubworker.runtime.testing.WorkerHarness;
import dev.pubsubworker.testservices.SubscriptionSpec;
import java.io.BufferedReader;
import java.io.PrintWriter;
import java.io.StringReader;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Pub/Sub's real message limit through the emulator channel: a 9 MB message published with the
 * {@code publish} command and processed by the worker, and a pull batch of six ~900 KB messages
 * (over gRPC's default 4 MiB inbound limit together).
 */
class LargeMessageEndToEndTest {

  private static final Duration WAIT = Duration.ofSeconds(60);

  @TempDir Path dir;

  /** Payload size by the message's id attribute. */
  private final Map<String, Integer> sizes = new ConcurrentHashMap<>();

  private final MessageHandler handler =
      (message, ctx) -> sizes.put(message.attribute("id").orElse("?"), message.data().length);

  @Test
  void a_9_mb_message_published_by_the_cli_is_processed_by_the_worker() throws Exception {
    OutcomeRecorder outcomes = new OutcomeRecorder();
    try (WorkerHarness h = new WorkerHarness(SubscriptionSpec.defaults())) {
      h.create("", "", handler, List.of(outcomes)).start();
      Path payload = dir.resolve("nine-mb.bin");
      byte[] data = new byte[9_000_000];
      Arrays.fill(data, (byte) 'x');
      Files.write(payload, data);
      Path config = dir.resolve("publish.conf");
      Files.writeString(
          config,
          """
          pubsub-worker {
            project-id = "%s"
            pubsub-emulator-host = "%s"
            subscriptions { any { handler = any } }
          }
          """
              .formatted(h.pubsub.projectId(), h.pubsub.hostPort()));
      StringWriter out = new StringWriter();
      StringWriter err = new StringWriter();
      int exit =
          WorkerCli.execute(
              new String[] {
                "publish",
                "--topic",
                h.fixture.topic().toString(),
                "--data-file",
                payload.toString(),
                "-a",
                "id=nine-mb",
                "--config",
                config.toString()
              },
              new BufferedReader(new StringReader("")),
              new PrintWriter(out, true),
              new PrintWriter(err, true));
      assertThat(exit).as(err.toString()).isZero();
      await().atMost(WAIT).until(() -> outcomes.count(Outcome.PROCESSED) == 1);
      assertThat(sizes).containsEntry("nine-mb", 9_000_000);
    }
  }

  @Test
  void six_900_kb_messages_pulled_together_are_all_processed() {
    OutcomeRecorder outcomes = new OutcomeRecorder();
    try (WorkerHarness h = new WorkerHarness(SubscriptionSpec.defaults())) {
      // Published before the worker starts, so that its first pull finds them all (5.4 MB).
      for (int i = 0; i < 6; i++) {
        byte[] data = new byte[900_000];
        Arrays.fill(data, (byte) ('a' + i));
        h.pubsub.publish(
            h.fixture.topic(),
            PubsubMessage.newBuilder()
                .setData(ByteString.copyFrom(data))
                .putAttributes("id", "m" + i)
                .build());
      }
      h.create("executor-threads = 6", "", handler, List.of(outcomes)).start();
      await().atMost(WAIT).until(() -> outcomes.count(Outcome.PROCESSED) == 6);
      assertThat(sizes).hasSize(6).allSatisfy((id, size) -> assertThat(size).isEqualTo(900_000));
    }
  }
}
