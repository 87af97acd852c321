package dev.pubsubworker.runtime.pubsub;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What a redrive does: read up to {@code max} messages from a dead-letter subscription and process
 * each as the configured subscription {@code subscriptionId} would (its handler, guard mode, key
 * and key namespace).
 *
 * @param subscriptionId the configured subscription to act as (its id under {@code subscriptions})
 * @param from the dead-letter subscription to read, an id in the worker's project or {@code
 *     projects/P/subscriptions/S}; empty for the subscription's {@code dead-letter-subscription}
 * @param max the most messages to read in all; positive
 * @param dryRun report what would run and what is a duplicate, changing nothing: no claim, no
 *     handler, nothing acked (every message read is left on the dead-letter subscription)
 * @param filter attributes a dead letter must carry, each with exactly this value, to be redriven;
 *     the others are left on the dead-letter subscription
 * @param anySource redrive letters that name another subscription as their source too; by default a
 *     letter whose source ({@code pubsub-worker-subscription}, or Pub/Sub's {@code
 *     CloudPubSubDeadLetterSourceSubscription} and {@code ...Project}) is another subscription is
 *     left where it is, so a shared dead-letter topic's letters only go back to their own
 *     subscription. A letter that names no source is redriven either way
 */
public record RedriveRequest(
    String subscriptionId,
    Optional<String> from,
    int max,
    boolean dryRun,
    Map<String, String> filter,
    boolean anySource) {

  /** The default of {@link #max}: 1,000 messages. */
  public static final int DEFAULT_MAX = 1000;

  /**
   * Checks the components.
   *
   * @throws IllegalArgumentException if {@code max} is not positive, {@code subscriptionId} is
   *     empty, or a filter's attribute name is empty
   */
  public RedriveRequest {
    Objects.requireNonNull(subscriptionId, "subscriptionId");
    Objects.requireNonNull(from, "from");
    Objects.requireNonNull(filter, "filter");
    if (subscriptionId.isEmpty()) {
      throw new IllegalArgumentException("--subscription must name a configured subscription");
    }
    if (max <= 0) {
      throw new IllegalArgumentException("--max must be at least 1, but was " + max);
    }
    for (String name : filter.keySet()) {
      if (name.isEmpty()) {
        throw new IllegalArgumentException("--filter needs NAME=VALUE with a non-empty NAME");
      }
    }
    filter = Map.copyOf(filter);
  }
}
