package dev.pubsubworker.runtime.pubsub;

import com.google.cloud.pubsub.v1.Subscriber;
import dev.pubsubworker.runtime.config.SubscriptionConfig;
import java.time.Duration;

/**
 * The ack deadlines a subscription's {@link Subscriber} asks Pub/Sub for, as google-cloud-pubsub
 * derives them from the two per-extension settings the worker gives it.
 *
 * <p>What the client does (its {@code StreamingSubscriberConnection} and {@code
 * MessageDispatcher}):
 *
 * <ul>
 *   <li>When a stream opens it sends {@code stream_ack_deadline_seconds}: the maximum per extension
 *       if one was set explicitly, bounded to 10s..600s, else 60s. Pub/Sub leases every message it
 *       hands the stream that long until the client's first modifyAckDeadline (its "receipt") for
 *       that message, which it sends up to 100 ms after reading the message - and never for
 *       messages still in the transport's buffers while the stream waits for flow control.
 *   <li>Each extension (and each receipt) is the 99.9th percentile of the subscriber's recent ack
 *       times, at least the minimum per extension and at most the maximum, when set, and always
 *       within 10s..600s. Without an explicit maximum, long handlers push it up to 600s.
 *   <li>The minimum is 0 without exactly-once delivery; with it, the explicit minimum, or when none
 *       was set the client's own 60s capped by an explicit maximum. An explicit minimum and maximum
 *       must differ (the client refuses {@code min >= max}).
 * </ul>
 *
 * <p>So the worker always sets the maximum ({@code max-ack-extension-per-call}): that bounds the
 * stream ack deadline and every extension alike. It sets {@code min-ack-extension} with
 * exactly-once delivery when it is below the maximum; when the two are equal it sets the maximum
 * alone, and the client's exactly-once minimum, min(60s, maximum), is then the configured one (the
 * config allows equal values only up to 60s). Pure and thread-safe.
 */
final class AckDeadlines {

  /** The shortest ack deadline the client asks for (its {@code MIN_STREAM_ACK_DEADLINE}). */
  static final Duration CLIENT_MIN = Duration.ofSeconds(10);

  /** The longest ack deadline the client asks for, Pub/Sub's maximum. */
  static final Duration CLIENT_MAX = Duration.ofSeconds(600);

  private AckDeadlines() {}

  /**
   * The stream ack deadline the client sends when it opens a stream of {@code config}; since the
   * worker always sets the maximum per extension, it is also the longest extension, so the longest
   * deadline Pub/Sub holds any message of the subscription for without hearing from the client.
   */
  static Duration stream(SubscriptionConfig config) {
    return clamp(config.client().maxAckExtensionPerCall());
  }

  /** The longest extension the client asks for. */
  static Duration longestExtension(SubscriptionConfig config) {
    return clamp(config.client().maxAckExtensionPerCall());
  }

  /** The shortest extension the client asks for, with exactly-once delivery or without. */
  static Duration shortestExtension(SubscriptionConfig config, boolean exactlyOnce) {
    if (!exactlyOnce) {
      return CLIENT_MIN;
    }
    Duration min =
        passesMinimum(config)
            ? config.client().minAckExtension()
            : shorter(
                SubscriptionConfig.CLIENT_EXACTLY_ONCE_MIN_ACK_EXTENSION,
                config.client().maxAckExtensionPerCall());
    return clamp(min);
  }

  /** Sets the per-extension bounds of {@code config} on {@code builder}. */
  static Subscriber.Builder apply(
      Subscriber.Builder builder, SubscriptionConfig config, boolean exactlyOnce) {
    if (exactlyOnce && passesMinimum(config)) {
      builder.setMinDurationPerAckExtensionDuration(config.client().minAckExtension());
    }
    return builder.setMaxDurationPerAckExtensionDuration(config.client().maxAckExtensionPerCall());
  }

  /** Whether the minimum is given to the client: only below the maximum, as the client requires. */
  private static boolean passesMinimum(SubscriptionConfig config) {
    return config.client().minAckExtension().compareTo(config.client().maxAckExtensionPerCall())
        < 0;
  }

  private static Duration clamp(Duration d) {
    return d.compareTo(CLIENT_MIN) < 0 ? CLIENT_MIN : shorter(d, CLIENT_MAX);
  }

  private static Duration shorter(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }
}
