package dev.pubsubworker.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.google.pubsub.v1.DeadLetterPolicy;
import com.google.pubsub.v1.Subscription;
import com.google.pubsub.v1.TopicName;
import dev.pubsubworker.runtime.testing.CliProcess;
import dev.pubsubworker.runtime.testing.TestPubSub;
import dev.pubsubworker.testservices.PubSubEmulator;
import dev.pubsubworker.testservices.TestServices;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code create-resources} through its picocli entry point, on the embedded Pub/Sub server and on
 * Google's emulator: it creates the topic, the dead-letter topic, the subscription with its
 * dead-letter policy (read back from the server) and the dead-letter subscription; a second run
 * finds them all as they are; a subscription of another topic or without the asked-for policy is
 * reported as a mismatch and left unchanged; a config that points at Google Cloud is refused before
 * anything is contacted; {@code --topic} mistakes are one line each.
 */
class CreateResourcesCommandTest {

  @TempDir Path dir;

  /** A config on {@code pubsub}'s address with {@code subscriptions} as its subscriptions block. */
  private Path config(PubSubEmulator pubsub, String subscriptions) throws IOException {
    return config("\"" + pubsub.projectId() + "\"", "\"" + pubsub.hostPort() + "\"", subscriptions);
  }

  private Path config(String project, String emulatorHost, String subscriptions)
      throws IOException {
    Path file = dir.resolve("worker.conf");
    Files.writeString(
        file,
        """
        pubsub-worker {
          project-id = %s
          pubsub-emulator-host = %s
          lock-store.type = in-memory
          subscriptions { %s }
        }
        """
            .formatted(project, emulatorHost, subscriptions));
    return file;
  }

  private static String path(PubSubEmulator pubsub, String kind, String id) {
    return "projects/" + pubsub.projectId() + "/" + kind + "/" + id;
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(TestPubSub.Server.class)
  void creates_everything_the_config_names_and_a_second_run_finds_it_all(TestPubSub.Server server)
      throws IOException {
    PubSubEmulator pubsub = server.pubsub();
    String topic = TestServices.uniqueName("orders");
    String sub = TestServices.uniqueName("orders_sub");
    String deadTopic = TestServices.uniqueName("orders_dead");
    String deadSub = TestServices.uniqueName("orders_dead_sub");
    Path config =
        config(
            pubsub,
            """
            orders {
              name = %s, handler = orders
              dead-letter-topic = %s, dead-letter-subscription = %s
            }
            """
                .formatted(sub, deadTopic, deadSub));

    CliRun first = CliRun.of("create-resources", "--config", config.toString(), "--topic", topic);

    assertThat(first.exitCode()).as(first.err()).isEqualTo(ExitCodes.OK);
    assertThat(first.out().lines())
        .containsExactly(
            "topic " + path(pubsub, "topics", topic) + ": created",
            "topic " + path(pubsub, "topics", deadTopic) + ": created",
            "subscription "
                + path(pubsub, "subscriptions", sub)
                + ": created (topic "
                + path(pubsub, "topics", topic)
                + ", dead letters to "
                + path(pubsub, "topics", deadTopic)
                + " after 5 delivery attempts)",
            "subscription "
                + path(pubsub, "subscriptions", deadSub)
                + ": created (topic "
                + path(pubsub, "topics", deadTopic)
                + ")");
    // Read back from the server: the policy is on the subscription, the letters' one on its topic.
    Subscription created =
        pubsub.subscriptionAdmin().getSubscription(path(pubsub, "subscriptions", sub));
    assertThat(created.getTopic()).isEqualTo(path(pubsub, "topics", topic));
    assertThat(created.getDeadLetterPolicy())
        .isEqualTo(
            DeadLetterPolicy.newBuilder()
                .setDeadLetterTopic(path(pubsub, "topics", deadTopic))
                .setMaxDeliveryAttempts(5)
                .build());
    assertThat(
            pubsub
                .subscriptionAdmin()
                .getSubscription(path(pubsub, "subscriptions", deadSub))
                .getTopic())
        .isEqualTo(path(pubsub, "topics", deadTopic));
    assertThat(pubsub.topicAdmin().getTopic(path(pubsub, "topics", deadTopic)).getName())
        .isEqualTo(path(pubsub, "topics", deadTopic));

    CliRun second = CliRun.of("create-resources", "--config", config.toString(), "--topic", topic);

    assertThat(second.exitCode()).as(second.err()).isEqualTo(ExitCodes.OK);
    assertThat(second.out().lines())
        .containsExactly(
            "topic " + path(pubsub, "topics", topic) + ": exists",
            "topic " + path(pubsub, "topics", deadTopic) + ": exists",
            "subscription "
                + path(pubsub, "subscriptions", sub)
                + ": exists (topic "
                + path(pubsub, "topics", topic)
                + ", dead letters to "
                + path(pubsub, "topics", deadTopic)
                + " after 5 delivery attempts)",
            "subscription "
                + path(pubsub, "subscriptions", deadSub)
                + ": exists (topic "
                + path(pubsub, "topics", deadTopic)
                + ")");
    assertThat(pubsub.subscriptionAdmin().getSubscription(path(pubsub, "subscriptions", sub)))
        .isEqualTo(created);
  }

  @Test
  void without_a_dead_letter_topic_the_subscription_gets_no_policy_and_says_so()
      throws IOException {
    PubSubEmulator pubsub = TestPubSub.embedded();
    String topic = TestServices.uniqueName("plain");
    String sub = TestServices.uniqueName("plain_sub");
    Path config = config(pubsub, "orders { name = %s, handler = orders }".formatted(sub));

    CliRun run =
        CliRun.of("create-resources", "--config", config.toString(), "--topic", "orders=" + topic);

    assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCodes.OK);
    assertThat(run.out())
        .contains(
            "subscription "
                + path(pubsub, "subscriptions", sub)
                + ": created (topic "
                + path(pubsub, "topics", topic)
                + ", no dead-letter policy)");
    assertThat(
            pubsub
                .subscriptionAdmin()
                .getSubscription(path(pubsub, "subscriptions", sub))
                .hasDeadLetterPolicy())
        .isFalse();
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(TestPubSub.Server.class)
  void a_subscription_of_another_topic_is_a_mismatch_and_left_as_it_is(TestPubSub.Server server)
      throws IOException {
    PubSubEmulator pubsub = server.pubsub();
    TopicName other = pubsub.createTopic("other");
    String sub = TestServices.uniqueName("taken_sub");
    Subscription before =
        pubsub
            .subscriptionAdmin()
            .createSubscription(
                Subscription.newBuilder()
                    .setName(path(pubsub, "subscriptions", sub))
                    .setTopic(other.toString())
                    .build());
    String topic = TestServices.uniqueName("wanted");
    Path config = config(pubsub, "orders { name = %s, handler = orders }".formatted(sub));

    CliRun run = CliRun.of("create-resources", "--config", config.toString(), "--topic", topic);

    assertThat(run.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(run.out().lines())
        .containsExactly(
            "topic " + path(pubsub, "topics", topic) + ": created",
            "subscription "
                + path(pubsub, "subscriptions", sub)
                + ": mismatch: its topic is "
                + other
                + ", not "
                + path(pubsub, "topics", topic)
                + "; left as it is (delete it to have it created anew)");
    assertThat(run.err().lines())
        .containsExactly(
            "error: 1 resource(s) exist in another form than the config and --topic ask for"
                + " (mismatch above) and were left as they are");
    assertThat(pubsub.subscriptionAdmin().getSubscription(path(pubsub, "subscriptions", sub)))
        .isEqualTo(before);
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(TestPubSub.Server.class)
  void a_subscription_without_the_asked_for_dead_letter_policy_is_a_mismatch_and_left_as_it_is(
      TestPubSub.Server server) throws IOException {
    PubSubEmulator pubsub = server.pubsub();
    TopicName topic = pubsub.createTopic("orders");
    String sub = TestServices.uniqueName("bare_sub");
    Subscription before =
        pubsub
            .subscriptionAdmin()
            .createSubscription(
                Subscription.newBuilder()
                    .setName(path(pubsub, "subscriptions", sub))
                    .setTopic(topic.toString())
                    .build());
    String deadTopic = TestServices.uniqueName("bare_dead");
    Path config =
        config(
            pubsub,
            "orders { name = %s, handler = orders, dead-letter-topic = %s }"
                .formatted(sub, deadTopic));

    CliRun run =
        CliRun.of("create-resources", "--config", config.toString(), "--topic", topic.getTopic());

    assertThat(run.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(run.out().lines())
        .containsExactly(
            "topic " + topic + ": exists",
            "topic " + path(pubsub, "topics", deadTopic) + ": created",
            "subscription "
                + path(pubsub, "subscriptions", sub)
                + ": mismatch: it has no dead-letter policy, but the config's dead-letter topic is "
                + path(pubsub, "topics", deadTopic)
                + "; left as it is (delete it to have it created anew)");
    assertThat(pubsub.subscriptionAdmin().getSubscription(path(pubsub, "subscriptions", sub)))
        .isEqualTo(before);
  }

  @Test
  void a_dead_letter_policy_on_another_topic_is_a_mismatch() throws IOException {
    PubSubEmulator pubsub = TestPubSub.embedded();
    TopicName topic = pubsub.createTopic("orders");
    TopicName elsewhere = pubsub.createTopic("elsewhere");
    String sub = TestServices.uniqueName("dl_sub");
    pubsub
        .subscriptionAdmin()
        .createSubscription(
            Subscription.newBuilder()
                .setName(path(pubsub, "subscriptions", sub))
                .setTopic(topic.toString())
                .setDeadLetterPolicy(
                    DeadLetterPolicy.newBuilder()
                        .setDeadLetterTopic(elsewhere.toString())
                        .setMaxDeliveryAttempts(7))
                .build());
    String deadTopic = TestServices.uniqueName("dl_dead");
    Path config =
        config(
            pubsub,
            "orders { name = %s, handler = orders, dead-letter-topic = %s }"
                .formatted(sub, deadTopic));

    CliRun run =
        CliRun.of("create-resources", "--config", config.toString(), "--topic", topic.toString());

    assertThat(run.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(run.out())
        .contains(
            ": mismatch: its dead-letter policy's topic is "
                + elsewhere
                + ", but the config's dead-letter topic is "
                + path(pubsub, "topics", deadTopic));
    assertThat(
            pubsub
                .subscriptionAdmin()
                .getSubscription(path(pubsub, "subscriptions", sub))
                .getDeadLetterPolicy()
                .getDeadLetterTopic())
        .isEqualTo(elsewhere.toString());
  }

  @Test
  void a_config_that_points_at_google_cloud_is_refused_before_anything_is_contacted()
      throws IOException {
    // No emulator host: the worker would use Application Default Credentials and real Pub/Sub.
    Path config =
        config("\"my-project\"", "\"\"", "orders { name = orders-sub, handler = orders }");

    CliRun run = CliRun.of("create-resources", "--config", config.toString(), "--topic", "orders");

    assertThat(run.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(run.out()).isEmpty();
    assertThat(run.err().lines())
        .containsExactly(
            "error: create-resources works only on a Pub/Sub emulator, and this config points at"
                + " Google Cloud (project my-project): set pubsub-worker.pubsub-emulator-host or"
                + " PUBSUB_EMULATOR_HOST, or create Google Cloud resources with gcloud or"
                + " Terraform");
  }

  @Test
  void pubsub_emulator_host_in_the_environment_is_the_emulator_as_for_run() throws Exception {
    PubSubEmulator pubsub = TestPubSub.embedded();
    String topic = TestServices.uniqueName("env");
    String sub = TestServices.uniqueName("env_sub");
    // No pubsub-emulator-host in the file: reference.conf takes it from PUBSUB_EMULATOR_HOST.
    Path file = dir.resolve("env.conf");
    Files.writeString(
        file,
        """
        pubsub-worker {
          project-id = "%s"
          lock-store.type = in-memory
          subscriptions { orders { name = %s, handler = orders } }
        }
        """
            .formatted(pubsub.projectId(), sub));
    String[] args = {"create-resources", "--config", file.toString(), "--topic", topic};

    Path withHost = dir.resolve("with-host.log");
    ProcessBuilder pb = CliProcess.builder(withHost, args);
    pb.environment().put("PUBSUB_EMULATOR_HOST", pubsub.hostPort());
    Process p = pb.start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(Files.readString(withHost)).isEqualTo(ExitCodes.OK);
    assertThat(Files.readString(withHost))
        .contains("subscription " + path(pubsub, "subscriptions", sub) + ": created");
    assertThat(pubsub.subscriptionAdmin().getSubscription(path(pubsub, "subscriptions", sub)))
        .isNotNull();

    Path withoutHost = dir.resolve("without-host.log");
    ProcessBuilder cloud = CliProcess.builder(withoutHost, args);
    cloud.environment().remove("PUBSUB_EMULATOR_HOST");
    Process refused = cloud.start();
    assertThat(refused.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(refused.exitValue()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(Files.readString(withoutHost).lines().filter(l -> l.startsWith("error: ")))
        .singleElement()
        .asString()
        .startsWith("error: create-resources works only on a Pub/Sub emulator");
  }

  @Test
  void an_emulator_that_does_not_answer_is_one_line_and_exit_3() throws IOException {
    int port;
    try (ServerSocket socket = new ServerSocket(0)) {
      port = socket.getLocalPort();
    }
    Path config =
        config(
            "\"p\"",
            "\"127.0.0.1:" + port + "\"",
            "orders { name = orders-sub, handler = orders }");

    CliRun run =
        assertTimeoutPreemptively(
            Duration.ofSeconds(60),
            () -> CliRun.of("create-resources", "--config", config.toString(), "--topic", "o"));

    assertThat(run.exitCode()).isEqualTo(ExitCodes.UNAVAILABLE);
    assertThat(run.out()).isEmpty();
    assertThat(run.err().lines()).hasSize(1);
    assertThat(run.err())
        .startsWith("error: topic projects/p/topics/o: ")
        .contains("the Pub/Sub emulator at 127.0.0.1:" + port)
        .doesNotContain("Exception");
  }

  @Test
  void two_subscriptions_take_a_topic_each() throws IOException {
    PubSubEmulator pubsub = TestPubSub.embedded();
    String a = TestServices.uniqueName("a_sub");
    String b = TestServices.uniqueName("b_sub");
    String topicA = TestServices.uniqueName("a");
    String topicB = TestServices.uniqueName("b");
    Path config =
        config(
            pubsub,
            "a { name = %s, handler = orders }, b { name = %s, handler = orders }".formatted(a, b));
    String file = config.toString();

    CliRun run =
        CliRun.of(
            "create-resources",
            "--config",
            file,
            "--topic",
            "b=" + path(pubsub, "topics", topicB),
            "--topic",
            "a=" + topicA);

    assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCodes.OK);
    assertThat(run.out().lines())
        .containsExactly(
            "topic " + path(pubsub, "topics", topicA) + ": created",
            "subscription "
                + path(pubsub, "subscriptions", a)
                + ": created (topic "
                + path(pubsub, "topics", topicA)
                + ", no dead-letter policy)",
            "topic " + path(pubsub, "topics", topicB) + ": created",
            "subscription "
                + path(pubsub, "subscriptions", b)
                + ": created (topic "
                + path(pubsub, "topics", topicB)
                + ", no dead-letter policy)");

    assertThat(oneLine(CliRun.of("create-resources", "--config", file, "--topic", topicA)))
        .isEqualTo(
            "error: --topic "
                + topicA
                + ": give --topic ID=TOPIC for each subscription when the config has more than one"
                + " (it has a, b)");
    assertThat(oneLine(CliRun.of("create-resources", "--config", file, "--topic", "a=" + topicA)))
        .isEqualTo(
            "error: --topic: no topic for subscription(s) b; give --topic ID=TOPIC for each");
    assertThat(
            oneLine(
                CliRun.of(
                    "create-resources", "--config", file, "--topic", "a=x", "--topic", "c=y")))
        .isEqualTo("error: --topic c=y: no subscription 'c' in the config (it has a, b)");
    assertThat(
            oneLine(
                CliRun.of(
                    "create-resources", "--config", file, "--topic", "a=x", "--topic", "a=y")))
        .isEqualTo("error: --topic: subscription a is given twice");
    assertThat(
            oneLine(
                CliRun.of(
                    "create-resources",
                    "--config",
                    file,
                    "--topic",
                    "a=projects/p/subscriptions/x",
                    "--topic",
                    "b=y")))
        .isEqualTo(
            "error: --topic a=projects/p/subscriptions/x: a topic is an id or projects/P/topics/T");
    assertThat(oneLine(CliRun.of("create-resources", "--config", file)))
        .startsWith("error: Missing required option: '--topic=[ID=]TOPIC'");
  }

  @Test
  void a_dead_letter_subscription_without_a_dead_letter_topic_is_refused() throws IOException {
    PubSubEmulator pubsub = TestPubSub.embedded();
    Path config =
        config(
            pubsub,
            "orders { name = x_sub, handler = orders, dead-letter-subscription = x_dead_sub }");

    assertThat(
            oneLine(CliRun.of("create-resources", "--config", config.toString(), "--topic", "x")))
        .isEqualTo(
            "error: subscription orders: dead-letter-subscription is set but dead-letter-topic is"
                + " not, so the topic to create it on is unknown; set dead-letter-topic");
  }

  /** A run that failed on bad input: exit 2, nothing on stdout; its first line on stderr. */
  private static String oneLine(CliRun run) {
    assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(run.out()).isEmpty();
    return run.err().lines().findFirst().orElseThrow();
  }
}
