package dev.pubsubworker.pubsub;

/**
 * The SLF4J MDC keys a {@link GuardedReceiver} sets on the thread that handles a delivery, for as
 * long as it works on it: {@link #SUBSCRIPTION}, {@link #MESSAGE_ID} and {@link #DELIVERY_ATTEMPT}
 * from the start, {@link #KEY} (as the guard's key log format renders it) once the key is known,
 * and {@link #FENCE} once the claim is won. So a handler's own log lines, and a log layout that
 * prints the MDC, carry them. They are removed when the receiver is done with the delivery on that
 * thread.
 */
public final class MdcKeys {

  /** MDC key: the receiver's subscription name ({@link GuardedReceiver#newBuilder}). */
  public static final String SUBSCRIPTION = "subscription";

  /** MDC key: Pub/Sub's message id. */
  public static final String MESSAGE_ID = "messageId";

  /** MDC key: the delivery attempt, {@code 0} when Pub/Sub does not report it. */
  public static final String DELIVERY_ATTEMPT = "deliveryAttempt";

  /** MDC key: the lock key, as the guard's key log format renders it. */
  public static final String KEY = "key";

  /** MDC key: the claim's fencing token. */
  public static final String FENCE = "fence";

  private MdcKeys() {}
}
