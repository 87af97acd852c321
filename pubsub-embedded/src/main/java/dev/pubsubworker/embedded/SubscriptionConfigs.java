package dev.pubsubworker.embedded;

import com.google.protobuf.FieldMask;
import com.google.pubsub.v1.DeadLetterPolicy;
import com.google.pubsub.v1.PushConfig;
import com.google.pubsub.v1.RetryPolicy;
import com.google.pubsub.v1.Subscription;
import io.grpc.Status;
import java.time.Duration;
import java.util.Set;

/**
 * Checks subscription settings and fills in Pub/Sub's defaults (an empty push_config on a pull
 * subscription among them); refuses what the embedded server does not implement (filters, push,
 * BigQuery and Cloud Storage delivery) with INVALID_ARGUMENT.
 */
final class SubscriptionConfigs {

  private static final Set<String> IMMUTABLE =
      Set.of("name", "topic", "enable_message_ordering", "filter");

  private SubscriptionConfigs() {}

  static Subscription forCreate(Subscription request) {
    Subscription.Builder builder = request.toBuilder();
    if (builder.getAckDeadlineSeconds() == 0) {
      builder.setAckDeadlineSeconds(Validation.DEFAULT_ACK_DEADLINE_SECONDS);
    }
    if (!builder.hasMessageRetentionDuration()) {
      builder.setMessageRetentionDuration(Validation.toProto(Validation.DEFAULT_RETENTION));
    }
    if (!builder.hasExpirationPolicy()) {
      builder.getExpirationPolicyBuilder().setTtl(Validation.toProto(Duration.ofDays(31)));
    }
    builder.setState(Subscription.State.ACTIVE);
    return check(builder);
  }

  static Subscription forUpdate(Subscription current, Subscription update, FieldMask mask) {
    Subscription.Builder merged =
        FieldMasks.apply(current, update, mask, "UpdateSubscriptionRequest", IMMUTABLE).toBuilder();
    if (merged.getAckDeadlineSeconds() == 0) {
      merged.setAckDeadlineSeconds(Validation.DEFAULT_ACK_DEADLINE_SECONDS);
    }
    if (!merged.hasMessageRetentionDuration()) {
      merged.setMessageRetentionDuration(Validation.toProto(Validation.DEFAULT_RETENTION));
    }
    return check(merged);
  }

  private static Subscription check(Subscription.Builder builder) {
    int ackDeadline = builder.getAckDeadlineSeconds();
    if (ackDeadline < Validation.MIN_ACK_DEADLINE_SECONDS
        || ackDeadline > Validation.MAX_ACK_DEADLINE_SECONDS) {
      throw Validation.invalid(
          "Invalid ack_deadline_seconds: must be between 10 and 600, but was " + ackDeadline);
    }
    if (!builder.getFilter().isEmpty()) {
      throw Validation.invalid(
          "filters are not supported by the embedded Pub/Sub server (filter="
              + builder.getFilter()
              + ")");
    }
    // Output only: the server fills it in from the topic when it answers.
    builder.clearTopicMessageRetentionDuration();
    Validation.checkRetention(builder.getMessageRetentionDuration());
    if (builder.getExpirationPolicy().hasTtl()) {
      Validation.checkExpirationTtl(builder.getExpirationPolicy().getTtl());
    }
    if (!builder.hasPushConfig()) {
      // A pull subscription has an empty push_config, as on Pub/Sub: clients read it unguarded.
      builder.setPushConfig(PushConfig.getDefaultInstance());
    }
    if (!builder.getPushConfig().getPushEndpoint().isEmpty()) {
      throw Validation.invalid(
          "push subscriptions are not supported by the embedded Pub/Sub server: leave"
              + " push_config empty");
    }
    if (builder.hasBigqueryConfig() || builder.hasCloudStorageConfig()) {
      throw Validation.invalid(
          "BigQuery and Cloud Storage subscriptions are not supported by the embedded Pub/Sub"
              + " server");
    }
    if (builder.hasDeadLetterPolicy()) {
      DeadLetterPolicy policy = builder.getDeadLetterPolicy();
      Names.check(policy.getDeadLetterTopic(), "topics");
      int attempts = policy.getMaxDeliveryAttempts();
      if (attempts == 0) {
        builder.setDeadLetterPolicy(
            policy.toBuilder().setMaxDeliveryAttempts(Validation.DEFAULT_MAX_DELIVERY_ATTEMPTS));
      } else if (attempts < 5) {
        throw Status.OUT_OF_RANGE
            .withDescription(
                "The value for max_delivery_attempts is too small. You passed "
                    + attempts
                    + " in the request, but the minimum value is 5.")
            .asRuntimeException();
      } else if (attempts > 100) {
        throw Status.OUT_OF_RANGE
            .withDescription(
                "The value for max_delivery_attempts is too large. You passed "
                    + attempts
                    + " in the request, but the maximum value is 100.")
            .asRuntimeException();
      }
    }
    if (builder.hasRetryPolicy()) {
      RetryPolicy policy = builder.getRetryPolicy();
      Duration min =
          policy.hasMinimumBackoff()
              ? Validation.toDuration(policy.getMinimumBackoff())
              : Validation.DEFAULT_MIN_BACKOFF;
      Duration max =
          policy.hasMaximumBackoff()
              ? Validation.toDuration(policy.getMaximumBackoff())
              : Validation.DEFAULT_MAX_BACKOFF;
      Duration limit = Duration.ofSeconds(600);
      if (min.isNegative()
          || min.compareTo(limit) > 0
          || max.isNegative()
          || max.compareTo(limit) > 0) {
        throw Validation.invalid(
            "Invalid retry_policy: backoffs must be between 0 and 600 seconds, but were minimum "
                + min
                + ", maximum "
                + max);
      }
      if (min.compareTo(max) > 0) {
        throw Validation.invalid(
            "Invalid retry_policy: minimum_backoff " + min + " exceeds maximum_backoff " + max);
      }
      builder.setRetryPolicy(
          RetryPolicy.newBuilder()
              .setMinimumBackoff(Validation.toProto(min))
              .setMaximumBackoff(Validation.toProto(max)));
    }
    return builder.build();
  }
}
