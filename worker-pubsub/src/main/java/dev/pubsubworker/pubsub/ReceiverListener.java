package dev.pubsubworker.pubsub;

import com.google.cloud.pubsub.v1.AckResponse;
import com.google.pubsub.v1.PubsubMessage;
import java.time.Duration;

/**
 * Observes a {@link GuardedReceiver}, for metrics and tracing. One listener may observe several
 * receivers: every event names the receiver's subscription (the name given to {@link
 * GuardedReceiver#newBuilder}). Every method has a no-op default.
 *
 * <p>Methods are called on the threads that handle deliveries (and, for a delivery that times out
 * waiting, the receiver's timer), so they must be fast and thread-safe. An exception thrown by one
 * is logged and ignored: observation never changes how a delivery is settled.
 */
public interface ReceiverListener {

  /** A message arrived on {@code subscription}. */
  default void received(String subscription) {}

  /**
   * A message was settled with {@code outcome}; {@code handlerTime} is the time from receipt to
   * settling (guard calls included), zero for a delivery settled without running (refused at the
   * stop, timed out in its key's line) or abandoned at the stop.
   */
  default void settled(String subscription, Outcome outcome, Duration handlerTime) {}

  /** The number of deliveries of {@code subscription} whose handling is in progress changed. */
  default void inFlight(String subscription, int delta) {}

  /**
   * The number of deliveries of {@code subscription} that wait without a thread changed: parked
   * (their key held by another claim, the claim retried later) or queued locally behind a delivery
   * of the same key.
   */
  default void parked(String subscription, int delta) {}

  /**
   * A delivery that waited (parked or queued locally) was settled, {@code waited} after it first
   * began to wait; its outcome is reported to {@link #settled} as well.
   */
  default void parkedSettled(String subscription, Outcome outcome, Duration waited) {}

  /**
   * An ack through {@link GuardedReceiver}'s {@code MessageReceiverWithAckResponse} form completed
   * with {@code response} (a failed future counts as {@link AckResponse#OTHER}). Without
   * exactly-once delivery the client reports every ack as {@link AckResponse#SUCCESSFUL}.
   */
  default void ackResponse(String subscription, AckResponse response) {}

  /**
   * A delivery of {@code subscription} arrived; the returned observer follows it to its settlement
   * (tracing). The default observes nothing.
   */
  default DeliveryObserver deliveryStarted(String subscription, PubsubMessage message) {
    return DeliveryObserver.NONE;
  }
}
