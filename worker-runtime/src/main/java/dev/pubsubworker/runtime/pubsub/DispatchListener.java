package dev.pubsubworker.runtime.pubsub;

import dev.pubsubworker.pubsub.ReceiverListener;

/**
 * Observes the worker, for metrics and tracing: every subscription's receiver (the events of {@link
 * ReceiverListener}, each naming the subscription's id) and its streaming pulls. Methods are called
 * on handler threads and gRPC threads and must be fast and thread-safe; an exception thrown by one
 * is logged and ignored.
 */
public interface DispatchListener extends ReceiverListener {

  /** A streaming pull of {@code subscription} was opened (the first one, or a reconnect). */
  default void streamOpened(String subscription) {}

  /**
   * A streaming pull of {@code subscription} closed with an error, {@code code} being the gRPC
   * status code's name (e.g. {@code UNAVAILABLE}); the client reconnects on its own.
   */
  default void streamError(String subscription, String code) {}
}
