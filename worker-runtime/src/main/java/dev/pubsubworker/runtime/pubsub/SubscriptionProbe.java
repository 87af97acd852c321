package dev.pubsubworker.runtime.pubsub;

import com.google.api.core.InternalApi;
import com.google.api.gax.rpc.ApiException;
import com.google.api.gax.rpc.StatusCode;
import com.google.cloud.pubsub.v1.SubscriptionAdminClient;
import com.google.pubsub.v1.GetSubscriptionRequest;
import com.google.pubsub.v1.ProjectSubscriptionName;
import com.google.pubsub.v1.Subscription;
import dev.pubsubworker.runtime.config.ExactlyOnceMode;
import dev.pubsubworker.runtime.config.SubscriptionConfig;
import java.io.IOException;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a subscription through the admin API at start-up: whether it exists, whether exactly-once
 * delivery is on, its dead-letter policy and whether it has a retry policy ({@link
 * DeadLetterPolicyCheck} then judges them). A subscription that does not exist stops the start; one
 * the worker may not read (PERMISSION_DENIED) falls back to the configured {@code exactly-once}
 * with a warning.
 */
@InternalApi("the worker's start-up reads of its subscriptions")
public final class SubscriptionProbe {

  private static final Logger log = LoggerFactory.getLogger(SubscriptionProbe.class);

  private SubscriptionProbe() {}

  /** The full path of a configured subscription name in {@code projectId}. */
  public static String path(String projectId, String name) {
    return name.startsWith("projects/") ? name : ProjectSubscriptionName.format(projectId, name);
  }

  /**
   * Reads the facts of {@code config}'s subscription.
   *
   * @throws SubscriptionUnavailableException if it does not exist or cannot be reached
   */
  public static SubscriptionFacts read(
      PubSubConnection connection, String projectId, SubscriptionConfig config) {
    String path = path(projectId, config.name());
    try (SubscriptionAdminClient admin =
        SubscriptionAdminClient.create(connection.subscriptionAdminSettings())) {
      Subscription s =
          AdminCalls.await(
              admin
                  .getSubscriptionCallable()
                  .futureCall(GetSubscriptionRequest.newBuilder().setSubscription(path).build()));
      boolean exactlyOnce =
          switch (config.client().exactlyOnce()) {
            case AUTO -> s.getEnableExactlyOnceDelivery();
            case ON -> true;
            case OFF -> false;
          };
      if (config.client().exactlyOnce() != ExactlyOnceMode.AUTO
          && exactlyOnce != s.getEnableExactlyOnceDelivery()) {
        log.warn(
            "subscription {}: exactly-once = {} in config, but the subscription has it {}",
            config.id(),
            config.client().exactlyOnce(),
            s.getEnableExactlyOnceDelivery() ? "on" : "off");
      }
      Optional<String> dlq =
          s.hasDeadLetterPolicy() && !s.getDeadLetterPolicy().getDeadLetterTopic().isEmpty()
              ? Optional.of(s.getDeadLetterPolicy().getDeadLetterTopic())
              : Optional.empty();
      return new SubscriptionFacts(
          path,
          exactlyOnce,
          dlq,
          dlq.isPresent() ? s.getDeadLetterPolicy().getMaxDeliveryAttempts() : 0,
          s.getAckDeadlineSeconds(),
          s.hasRetryPolicy(),
          s.getEnableMessageOrdering());
    } catch (ApiException e) {
      StatusCode.Code code = e.getStatusCode().getCode();
      if (code == StatusCode.Code.NOT_FOUND) {
        throw new SubscriptionUnavailableException(
            "subscription " + config.id() + ": " + path + " does not exist", e);
      }
      if (code == StatusCode.Code.PERMISSION_DENIED) {
        boolean assumed = config.client().exactlyOnce() == ExactlyOnceMode.ON;
        log.warn(
            "subscription {}: not allowed to read {} (grant pubsub.subscriptions.get to learn its"
                + " settings); assuming exactly-once {} and no dead-letter policy",
            config.id(),
            path,
            assumed ? "on" : "off");
        return new SubscriptionFacts(path, assumed, Optional.empty(), 0, 0, false, true);
      }
      throw new SubscriptionUnavailableException(
          "subscription " + config.id() + ": cannot read " + path + " (" + code + ")", e);
    } catch (IOException e) {
      throw new SubscriptionUnavailableException(
          "subscription " + config.id() + ": cannot create an admin client", e);
    }
  }
}
