package dev.pubsubworker.testservices;

import com.google.pubsub.v1.SubscriptionName;
import com.google.pubsub.v1.TopicName;
import java.util.Objects;
import java.util.Optional;

/**
 * What {@link PubSubEmulator#createSubscription(SubscriptionSpec)} created: a fresh topic, a
 * subscription on it, and — when the spec has a dead-letter policy — the dead-letter topic with a
 * subscription to pull dead letters from. Immutable.
 *
 * @param topic the topic to publish to
 * @param subscription the subscription under test
 * @param deadLetterTopic the dead-letter topic, when the spec asked for one
 * @param deadLetterSubscription a plain subscription on the dead-letter topic, when there is one
 * @param spec the spec it was created from
 */
public record SubscriptionFixture(
    TopicName topic,
    SubscriptionName subscription,
    Optional<TopicName> deadLetterTopic,
    Optional<SubscriptionName> deadLetterSubscription,
    SubscriptionSpec spec) {

  /** Checks that no component is null and that the dead-letter parts come together. */
  public SubscriptionFixture {
    Objects.requireNonNull(topic, "topic");
    Objects.requireNonNull(subscription, "subscription");
    Objects.requireNonNull(deadLetterTopic, "deadLetterTopic");
    Objects.requireNonNull(deadLetterSubscription, "deadLetterSubscription");
    Objects.requireNonNull(spec, "spec");
    if (deadLetterTopic.isPresent() != deadLetterSubscription.isPresent()) {
      throw new IllegalArgumentException(
          "deadLetterTopic and deadLetterSubscription must both be present or both be empty");
    }
  }

  /**
   * The dead-letter subscription.
   *
   * @throws IllegalStateException when the spec had no dead-letter policy
   */
  public SubscriptionName requireDeadLetterSubscription() {
    return deadLetterSubscription.orElseThrow(
        () -> new IllegalStateException("the spec has no dead-letter policy: " + spec));
  }
}
