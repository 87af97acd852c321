package dev.pubsubworker.core;

/**
 * A lock store failed: unreachable, timed out, refused the command, or could not commit after its
 * bounded retries. The outcome of the verb is unknown, so a handler guarded by it must be retried
 * (nacked), never acknowledged.
 *
 * <p>Messages name the verb and the backend's namespace (prefix, table, kind), never the key: keys
 * can carry business data. The store's own exception is the {@linkplain #getCause() cause}.
 */
public class LockBackendException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /**
   * @param message what failed, e.g. {@code "claim failed on redis prefix 'pw:'"}
   * @param cause the store's exception
   */
  public LockBackendException(String message, Throwable cause) {
    super(message, cause);
  }

  /**
   * @param message what failed
   */
  public LockBackendException(String message) {
    super(message);
  }
}
