package dev.pubsubworker.core;

/**
 * A key the backend does not accept (empty, too long, not well-formed UTF-16, or against a rule of
 * the backend), reported by {@link IdempotencyGuard#lock} and {@link IdempotencyGuard#mutex} before
 * any I/O: nothing was claimed and the work did not run. The guard checks the key once per call, so
 * a caller need not check it first; catching this type tells a bad key apart from an {@link
 * IllegalArgumentException} the work itself threw. The message names the problem and never echoes
 * the key.
 */
public final class InvalidLockKeyException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  /**
   * @param cause the backend's {@link LockBackend#validateKey} failure, whose message this one
   *     repeats
   */
  public InvalidLockKeyException(IllegalArgumentException cause) {
    super(cause.getMessage(), cause);
  }
}
