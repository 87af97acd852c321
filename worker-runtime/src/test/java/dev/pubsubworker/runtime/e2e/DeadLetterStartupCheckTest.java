package dev.pubsubworker.runtime.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.pubsubworker.api.PoisonMessageException;
import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.runtime.pubsub.SubscriptionUnavailableException;
import dev.pubsubworker.runtime.testing.WorkerHarness;
import dev.pubsubworker.testservices.SubscriptionSpec;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The start-up check of a subscription's retry and dead-letter policies (issue 15 item 4) and of
 * its dead-letter topic, on the embedded Pub/Sub server: a WARN with the gcloud command for a
 * subscription with neither policy, none for one with both, a one-line error for a configured
 * dead-letter topic that does not exist; and without any dead-letter topic a terminal failure is
 * nacked with an ERROR.
 */
class DeadLetterStartupCheckTest {

  private static final Duration WAIT = Duration.ofSeconds(60);

  private final Logger pubsubLogger = (Logger) LoggerFactory.getLogger("dev.pubsubworker");
  private final ListAppender<ILoggingEvent> log = new ListAppender<>();

  @BeforeEach
  void capture() {
    log.start();
    pubsubLogger.addAppender(log);
  }

  @AfterEach
  void release() {
    pubsubLogger.detachAppender(log);
  }

  private List<String> lines(Level level) {
    return log.list.stream()
        .filter(e -> e.getLevel() == level)
        .map(ILoggingEvent::getFormattedMessage)
        .toList();
  }

  @Test
  void
      neither_policy_warns_with_the_gcloud_command_and_a_terminal_failure_is_nacked_with_an_error() {
    RecordingHandler handler =
        new RecordingHandler()
            .behave(
                (m, ctx, call) -> {
                  throw new PoisonMessageException("bad");
                });
    OutcomeRecorder outcomes = new OutcomeRecorder();
    try (WorkerHarness h = new WorkerHarness(SubscriptionSpec.defaults())) {
      h.create("key = \"attribute:id\"", "", handler, List.of(outcomes)).start();
      String sub = h.fixture.subscription().toString();
      String suggested =
          "projects/"
              + h.pubsub.projectId()
              + "/topics/"
              + h.fixture.subscription().getSubscription()
              + "-dead-letter";
      assertThat(lines(Level.WARN))
          .anySatisfy(
              l ->
                  assertThat(l)
                      .startsWith(
                          "subscription test ("
                              + sub
                              + ") has neither a retry policy nor a dead-letter policy")
                      .contains(
                          "gcloud pubsub subscriptions update "
                              + sub
                              + " --dead-letter-topic="
                              + suggested
                              + " --max-delivery-attempts=5 --min-retry-delay=10s"
                              + " --max-retry-delay=600s")
                      .contains("gcloud pubsub topics create " + suggested))
          .anySatisfy(
              l ->
                  assertThat(l)
                      .startsWith("subscription test has no dead-letter topic")
                      .contains("pubsub-worker.subscriptions.test.dead-letter-topic"));

      h.publish("poison", Map.of("id", "po-1"));
      await().atMost(WAIT).until(() -> outcomes.count(Outcome.FAILED) >= 2);
      assertThat(outcomes.count(Outcome.DEAD_LETTERED)).isZero();
      assertThat(lines(Level.ERROR))
          .anySatisfy(
              l ->
                  assertThat(l)
                      .contains("with the terminal " + PoisonMessageException.class.getName())
                      .contains("subscription test has no dead-letter topic, so it is nacked"));
    }
  }

  @Test
  void a_subscription_with_both_policies_gets_no_warning() {
    SubscriptionSpec both =
        SubscriptionSpec.newBuilder()
            .setDeadLetterPolicy(5)
            .setRetryPolicy(Duration.ofSeconds(10), Duration.ofSeconds(600))
            .build();
    try (WorkerHarness h = new WorkerHarness(both)) {
      h.create("", "", new RecordingHandler(), List.of()).start();
      assertThat(log.list)
          .filteredOn(e -> e.getLoggerName().endsWith("DeadLetterPolicyCheck"))
          .extracting(ILoggingEvent::getLevel)
          .containsOnly(Level.INFO);
      assertThat(lines(Level.INFO))
          .contains(
              "subscription test: terminal failures are dead-lettered to "
                  + h.fixture.deadLetterTopic().get()
                  + " (from the subscription's dead-letter policy)");
    }
  }

  @Test
  void a_retry_policy_alone_warns_only_that_there_is_no_dead_letter_topic() {
    SubscriptionSpec retryOnly =
        SubscriptionSpec.newBuilder()
            .setRetryPolicy(Duration.ofSeconds(10), Duration.ofSeconds(600))
            .build();
    try (WorkerHarness h = new WorkerHarness(retryOnly)) {
      h.create("", "", new RecordingHandler(), List.of()).start();
      assertThat(lines(Level.WARN))
          .filteredOn(l -> l.startsWith("subscription test"))
          .singleElement()
          .asString()
          .startsWith("subscription test has no dead-letter topic");
    }
  }

  @Test
  void a_configured_dead_letter_topic_that_does_not_exist_stops_the_start_with_one_line() {
    try (WorkerHarness h = new WorkerHarness(SubscriptionSpec.defaults())) {
      String missing = "projects/" + h.pubsub.projectId() + "/topics/no-such-dead-letters";
      assertThatThrownBy(
              () ->
                  h.create(
                          "dead-letter-topic = no-such-dead-letters",
                          "",
                          new RecordingHandler(),
                          List.of())
                      .start())
          .isInstanceOf(SubscriptionUnavailableException.class)
          .hasMessage(
              "subscription test: the dead-letter topic "
                  + missing
                  + " (from pubsub-worker.subscriptions.test.dead-letter-topic) does not exist;"
                  + " create it (gcloud pubsub topics create "
                  + missing
                  + ") or fix the setting");
    }
  }
}
