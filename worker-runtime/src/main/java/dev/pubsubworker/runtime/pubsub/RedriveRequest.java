package dev.pubsubworker.runtime.pubsub;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What a redrive does: read up to {@code max} messages from a dead-letter subscription and either
 * process each as the configured subscription {@code subscriptionId} would (its handler, guard
 * mode, key and key namespace), or, with {@code republish}, publish each back to a topic as the
 * message it first was. Built with {@link #builder}.
 *
 * @param subscriptionId the configured subscription to act as (its id under {@code subscriptions})
 * @param from the dead-letter subscription to read, an id in the worker's project or {@code
 *     projects/P/subscriptions/S}; empty for the subscription's {@code dead-letter-subscription}
 * @param max the most messages to read in all; positive
 * @param dryRun report what would happen, changing nothing: no claim, no handler, no publish, no
 *     record forgotten, nothing acked (every message read is left on the dead-letter subscription)
 * @param filter attributes a dead letter must carry, each with exactly this value, to be redriven;
 *     the others are left on the dead-letter subscription
 * @param anySource redrive letters that name another subscription as their source too; by default a
 *     letter whose source ({@code pubsub-worker-subscription}, or Pub/Sub's {@code
 *     CloudPubSubDeadLetterSourceSubscription} and {@code ...Project}) is another subscription is
 *     left where it is, so a shared dead-letter topic's letters only go back to their own
 *     subscription. A letter that names no source is redriven either way
 * @param forget before processing a letter whose key is DONE, delete that record, so the letter
 *     runs again (a deliberate re-run of effects that already ran; the caller asks first). Not with
 *     {@code republish}
 * @param republish instead of processing, publish each letter's original message (data, attributes
 *     without the dead-letter ones, ordering key) to {@code topic}, with its original message id in
 *     {@code pubsub-worker-message-id} and its publish time in {@code pubsub-worker-publish-time},
 *     and ack the letter once Pub/Sub accepted the publish. Every subscription of the topic
 *     receives it again
 * @param topic with {@code republish}: the topic, an id in the worker's project or {@code
 *     projects/P/topics/T}; empty for the topic of the subscription {@code subscriptionId} names
 */
public record RedriveRequest(
    String subscriptionId,
    Optional<String> from,
    int max,
    boolean dryRun,
    Map<String, String> filter,
    boolean anySource,
    boolean forget,
    boolean republish,
    Optional<String> topic) {

  /** The default of {@link #max}: 1,000 messages. */
  public static final int DEFAULT_MAX = 1000;

  /**
   * Checks the components.
   *
   * @throws IllegalArgumentException if {@code max} is not positive, {@code subscriptionId} is
   *     empty, a filter's attribute name is empty, {@code forget} is combined with {@code
   *     republish}, or a {@code topic} is given without {@code republish}
   */
  public RedriveRequest {
    Objects.requireNonNull(subscriptionId, "subscriptionId");
    Objects.requireNonNull(from, "from");
    Objects.requireNonNull(filter, "filter");
    Objects.requireNonNull(topic, "topic");
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
    if (forget && republish) {
      throw new IllegalArgumentException(
          "--forget and --republish do not go together: a republished message reaches every"
              + " subscription of the topic; forget the keys first with `forget`, or redrive"
              + " without --republish");
    }
    if (topic.isPresent() && !republish) {
      throw new IllegalArgumentException("--topic is the topic of --republish: pass both or none");
    }
    if (topic.isPresent() && topic.get().isEmpty()) {
      throw new IllegalArgumentException("--topic must name a topic");
    }
    filter = Map.copyOf(filter);
  }

  /** A request to process up to {@link #DEFAULT_MAX} letters as {@code subscriptionId} would. */
  public static Builder builder(String subscriptionId) {
    return new Builder(subscriptionId);
  }

  /** Builds a {@link RedriveRequest}; every setting starts at its default (off, empty). */
  public static final class Builder {
    private final String subscriptionId;
    private Optional<String> from = Optional.empty();
    private int max = DEFAULT_MAX;
    private boolean dryRun;
    private final Map<String, String> filter = new LinkedHashMap<>();
    private boolean anySource;
    private boolean forget;
    private boolean republish;
    private Optional<String> topic = Optional.empty();

    private Builder(String subscriptionId) {
      this.subscriptionId = subscriptionId;
    }

    /** See {@link RedriveRequest#from}. */
    public Builder from(String deadLetterSubscription) {
      this.from = Optional.of(deadLetterSubscription);
      return this;
    }

    /** See {@link RedriveRequest#max}. */
    public Builder max(int max) {
      this.max = max;
      return this;
    }

    /** See {@link RedriveRequest#dryRun}. */
    public Builder dryRun(boolean dryRun) {
      this.dryRun = dryRun;
      return this;
    }

    /** Adds one attribute to {@link RedriveRequest#filter}. */
    public Builder filter(String name, String value) {
      this.filter.put(name, value);
      return this;
    }

    /** See {@link RedriveRequest#anySource}. */
    public Builder anySource(boolean anySource) {
      this.anySource = anySource;
      return this;
    }

    /** See {@link RedriveRequest#forget}. */
    public Builder forget(boolean forget) {
      this.forget = forget;
      return this;
    }

    /** Republishes to the subscription's own topic; see {@link RedriveRequest#republish}. */
    public Builder republish() {
      this.republish = true;
      return this;
    }

    /** Republishes to {@code topic}; see {@link RedriveRequest#topic}. */
    public Builder republishTo(String topic) {
      this.republish = true;
      this.topic = Optional.of(topic);
      return this;
    }

    /**
     * The request.
     *
     * @throws IllegalArgumentException as the {@link RedriveRequest} constructor
     */
    public RedriveRequest build() {
      return new RedriveRequest(
          subscriptionId, from, max, dryRun, filter, anySource, forget, republish, topic);
    }
  }
}
