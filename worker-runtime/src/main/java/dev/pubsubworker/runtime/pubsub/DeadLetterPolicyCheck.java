package dev.pubsubworker.runtime.pubsub;

import com.google.api.gax.rpc.ApiException;
import com.google.api.gax.rpc.StatusCode;
import com.google.cloud.pubsub.v1.TopicAdminClient;
import com.google.pubsub.v1.GetTopicRequest;
import dev.pubsubworker.runtime.config.SubscriptionConfig;
import dev.pubsubworker.runtime.config.WorkerConfig;
import java.io.IOException;
import java.util.Optional;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The start-up check of where a subscription's terminal failures go, beside {@link
 * SubscriptionProbe}:
 *
 * <ul>
 *   <li>The dead-letter topic is {@code dead-letter-topic} if set, else the subscription's
 *       dead-letter policy topic; it must exist (a one-line {@link
 *       SubscriptionUnavailableException} naming it otherwise). If the worker may not read topics
 *       (PERMISSION_DENIED: {@code roles/pubsub.publisher} alone does not grant {@code
 *       pubsub.topics.get}), a WARN says it was not checked.
 *   <li>Without any dead-letter topic, a WARN names the subscription and the fix: terminal failures
 *       are then nacked with an ERROR and come back.
 *   <li>A subscription with neither a retry policy nor a dead-letter policy gets a WARN with the
 *       {@code gcloud} command that adds both.
 * </ul>
 */
final class DeadLetterPolicyCheck {

  private static final Logger log = LoggerFactory.getLogger(DeadLetterPolicyCheck.class);

  private DeadLetterPolicyCheck() {}

  /** Looks a topic up: true if it exists, false if NOT_FOUND; other failures throw. */
  interface TopicLookup {
    boolean exists(String topic);
  }

  /** A lookup through a topic admin client on {@code connection}, which {@code use} gets. */
  static <T> T withTopicLookup(PubSubConnection connection, Function<TopicLookup, T> use) {
    try (TopicAdminClient admin = TopicAdminClient.create(connection.topicAdminSettings())) {
      return use.apply(
          topic -> {
            try {
              AdminCalls.await(
                  admin
                      .getTopicCallable()
                      .futureCall(GetTopicRequest.newBuilder().setTopic(topic).build()));
              return true;
            } catch (ApiException e) {
              if (e.getStatusCode().getCode() == StatusCode.Code.NOT_FOUND) {
                return false;
              }
              throw e;
            }
          });
    } catch (IOException e) {
      throw new SubscriptionUnavailableException("cannot create a topic admin client", e);
    }
  }

  /**
   * Checks {@code config}'s dead-letter routing as the class describes and returns its dead-letter
   * topic's full path, empty for none.
   *
   * @throws SubscriptionUnavailableException if the dead-letter topic does not exist or cannot be
   *     read
   */
  static Optional<String> check(
      WorkerConfig worker, SubscriptionConfig config, SubscriptionFacts facts, TopicLookup topics) {
    boolean factsRead = facts.ackDeadlineSeconds() > 0;
    if (factsRead && !facts.retryPolicy() && facts.deadLetterTopic().isEmpty()) {
      log.warn(
          "subscription {} ({}) has neither a retry policy nor a dead-letter policy: a failing"
              + " message is redelivered at once and forever. Add both: {}",
          config.id(),
          facts.path(),
          gcloudCommand(worker, config, facts));
    }
    Optional<String> topic = config.failures().deadLetterTopic().or(facts::deadLetterTopic);
    if (topic.isEmpty()) {
      log.warn(
          "subscription {} has no dead-letter topic: a terminal failure (PoisonMessageException,"
              + " poison-exceptions, a missing or invalid key) is nacked with an ERROR and comes"
              + " back. Set {}.subscriptions.{}.dead-letter-topic, or give the subscription a"
              + " dead-letter policy",
          config.id(),
          WorkerConfig.ROOT,
          config.id());
      return topic;
    }
    String source =
        config.failures().deadLetterTopic().isPresent()
            ? WorkerConfig.ROOT + ".subscriptions." + config.id() + ".dead-letter-topic"
            : "the subscription's dead-letter policy";
    boolean exists;
    try {
      exists = topics.exists(topic.get());
    } catch (ApiException e) {
      StatusCode.Code code = e.getStatusCode().getCode();
      if (code == StatusCode.Code.PERMISSION_DENIED) {
        log.warn(
            "subscription {}: not allowed to read the dead-letter topic {} (from {}), so whether it"
                + " exists is not checked; grant pubsub.topics.get to check it",
            config.id(),
            topic.get(),
            source);
        return topic;
      }
      throw new SubscriptionUnavailableException(
          "subscription "
              + config.id()
              + ": cannot read the dead-letter topic "
              + topic.get()
              + " ("
              + code
              + ")",
          e);
    }
    if (!exists) {
      throw new SubscriptionUnavailableException(
          "subscription "
              + config.id()
              + ": the dead-letter topic "
              + topic.get()
              + " (from "
              + source
              + ") does not exist; create it (gcloud pubsub topics create "
              + topic.get()
              + ") or fix the setting",
          null);
    }
    log.info(
        "subscription {}: terminal failures are dead-lettered to {} (from {})",
        config.id(),
        topic.get(),
        source);
    return topic;
  }

  /** The command that gives the subscription a dead-letter policy and a retry policy. */
  static String gcloudCommand(
      WorkerConfig worker, SubscriptionConfig config, SubscriptionFacts facts) {
    String topic =
        config
            .failures()
            .deadLetterTopic()
            .orElse(
                "projects/"
                    + worker.projectId()
                    + "/topics/"
                    + facts.path().substring(facts.path().lastIndexOf('/') + 1)
                    + "-dead-letter");
    return "gcloud pubsub subscriptions update "
        + facts.path()
        + " --dead-letter-topic="
        + topic
        + " --max-delivery-attempts=5 --min-retry-delay=10s --max-retry-delay=600s"
        + (config.failures().deadLetterTopic().isPresent()
            ? ""
            : " (create the topic first: gcloud pubsub topics create " + topic + ")");
  }
}
