package dev.pubsubworker.core;

import java.util.Objects;

/**
 * The work's lease was lost: an extension found the fence stale (another claim took the key), or
 * the store could not be reached until the lease ran out. Thrown by {@link
 * WorkContext#checkLease()} so that work can stop before an irreversible step. Propagating it makes
 * the guard release (a no-op on a stale fence) and rethrow, so the delivery is nacked.
 */
public final class LeaseLostException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final String key;
  private final long fence;

  /**
   * @param key the key whose lease was lost
   * @param fence the fence of the lost claim
   */
  public LeaseLostException(String key, long fence) {
    super("lease lost for the claim with fence " + fence);
    this.key = Objects.requireNonNull(key, "key");
    this.fence = fence;
  }

  /** The key whose lease was lost. */
  public String key() {
    return key;
  }

  /** The fence of the lost claim. */
  public long fence() {
    return fence;
  }
}
