package dev.pubsubworker.runtime.pubsub;

import com.google.api.core.InternalApi;
import java.util.Optional;

/**
 * What the worker learned about a subscription at start-up.
 *
 * @param path the full subscription path
 * @param exactlyOnce whether exactly-once delivery is on (read, or assumed by config)
 * @param deadLetterTopic the dead-letter topic, if the subscription has a dead-letter policy
 * @param maxDeliveryAttempts the policy's maximum delivery attempts, 0 without a policy
 * @param ackDeadlineSeconds the subscription's ack deadline, 0 if not read
 * @param retryPolicy whether the subscription has a retry policy (false if not read)
 * @param messageOrdering whether message ordering is on; assumed on when the subscription could not
 *     be read (deliveries with an ordering key then wait behind each other in this process, which
 *     keeps the order either way)
 */
@InternalApi("what the worker reads about a subscription at start")
public record SubscriptionFacts(
    String path,
    boolean exactlyOnce,
    Optional<String> deadLetterTopic,
    int maxDeliveryAttempts,
    int ackDeadlineSeconds,
    boolean retryPolicy,
    boolean messageOrdering) {}
