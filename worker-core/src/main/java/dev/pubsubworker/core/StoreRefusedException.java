package dev.pubsubworker.core;

/**
 * The store was reached and refused the call for what it was asked — a row a constraint of the
 * table refuses, a value a column cannot take — not because it is down, slow or busy; nothing of
 * the call was applied. Every other {@link LockBackendException} leaves the outcome unknown.
 *
 * <p>A {@link BatchLockBackend} batch verb throws it when the store refused the batch as a whole,
 * which may be because of one entry: the guard then sends each entry of the batch again alone,
 * through the single verb, on its own caller's thread, so only the entry the store refuses on its
 * own fails and its batch-mates are not failed with it. Thrown by a single verb, it is a {@link
 * LockBackendException} like any other (the delivery is nacked).
 */
public class StoreRefusedException extends LockBackendException {

  private static final long serialVersionUID = 1L;

  /**
   * @param message what was refused, e.g. {@code "claimAll failed on SQL table 'locks' (SQLState
   *     23514)"}
   * @param cause the store's exception
   */
  public StoreRefusedException(String message, Throwable cause) {
    super(message, cause);
  }

  /**
   * @param message what was refused
   */
  public StoreRefusedException(String message) {
    super(message);
  }
}
