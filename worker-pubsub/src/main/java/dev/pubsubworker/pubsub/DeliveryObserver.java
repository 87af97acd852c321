package dev.pubsubworker.pubsub;

/**
 * Follows one delivery from receipt to settlement, for tracing: what {@link
 * ReceiverListener#deliveryStarted} returns. The receiver calls {@link #activate} on each thread
 * that works on the delivery, reports the key, the fence and the handler's run, announces the
 * outcome it is about to ack or nack the message with ({@link #settling}), and ends with exactly
 * one {@link #settled}. Every method has a no-op default; implementations must be fast and must not
 * throw (an exception is logged and ignored, never changing how the delivery is settled).
 */
public interface DeliveryObserver {

  /** Observes nothing. */
  DeliveryObserver NONE = new DeliveryObserver() {};

  /** A scope that ends without a checked exception. */
  interface Scope extends AutoCloseable {
    /** A scope that does nothing. */
    Scope NONE = () -> {};

    /** Ends the scope on the thread that opened it. */
    @Override
    void close();
  }

  /**
   * Makes the delivery current on the calling thread (trace context, log fields) until the returned
   * scope is closed, on the same thread.
   */
  default Scope activate() {
    return Scope.NONE;
  }

  /**
   * The delivery's lock key was resolved.
   *
   * @param storedKey the key as stored (namespace included); implementations that export it must
   *     hash it first, keys can carry business data
   */
  default void keyResolved(String storedKey) {}

  /** The handler is about to run under a claim with this fencing token. */
  default void fenced(long fence) {}

  /** The handler starts on the calling thread; the returned scope closes when it returns. */
  default Scope handlerStarted() {
    return Scope.NONE;
  }

  /** The handler threw {@code error} (called before its scope closes). */
  default void handlerFailed(Throwable error) {}

  /**
   * The delivery is about to be acked or nacked with {@code outcome}, on the settling thread (for a
   * tracer that records the outcome on a span the client library ends at the ack or nack). Not
   * called when the stop nacked the delivery first; {@link #settled} follows either way.
   */
  default void settling(Outcome outcome) {}

  /**
   * The delivery was settled with {@code outcome}: the last call. A delivery abandoned at the stop
   * (nacked by the stop while its handler still ran) reports {@link Outcome#ABANDONED} when its
   * handler returns.
   */
  default void settled(Outcome outcome) {}
}
