package dev.pubsubworker.runtime.pubsub;

import com.google.cloud.pubsub.v1.AckResponse;
import com.google.pubsub.v1.PubsubMessage;
import java.time.Duration;

/**
 * Observes the dispatcher, for metrics. Methods are called on handler threads and must be fast and
 * thread-safe; an exception thrown by one is logged and ignored.
 */
public interface DispatchListener {

  /** A message arrived on {@code subscription}. */
  default void received(String subscription) {}

  /**
   * A message was settled with {@code outcome}; {@code handlerTime} is the time from receipt to
   * settling (guard calls included), zero for a delivery abandoned at shutdown.
   */
  default void settled(String subscription, Outcome outcome, Duration handlerTime) {}

  /** The number of messages of {@code subscription} whose handling is in progress changed. */
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

  /** An exactly-once ack completed with {@code response}. */
  default void ackResponse(String subscription, AckResponse response) {}

  /** A streaming pull of {@code subscription} was opened (the first one, or a reconnect). */
  default void streamOpened(String subscription) {}

  /**
   * A streaming pull of {@code subscription} closed with an error, {@code code} being the gRPC
   * status code's name (e.g. {@code UNAVAILABLE}); the client reconnects on its own.
   */
  default void streamError(String subscription, String code) {}

  /**
   * A delivery of {@code subscription} arrived; the returned observer follows it to its settlement
   * (tracing). The default observes nothing.
   */
  default DeliveryObserver deliveryStarted(String subscription, PubsubMessage message) {
    return DeliveryObserver.NONE;
  }
}
