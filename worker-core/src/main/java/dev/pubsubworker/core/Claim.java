package dev.pubsubworker.core;

import java.time.Instant;
import java.util.Objects;

/**
 * A won claim on a key: the proof of ownership that {@link LockBackend#complete}, {@link
 * LockBackend#release} and {@link LockBackend#extend} check.
 *
 * <p>Ownership is the {@code fence}, not the clock: a backend accepts a verb on this claim only
 * while the record's fence still equals {@link #fence()}. Every reclaim and every release raises
 * the stored fence, so a holder that was reclaimed (a "zombie") is refused.
 *
 * @param key the lock key, as claimed
 * @param fence the fencing token, 1 to {@link LockBackend#MAX_FENCE}; greater than that of every
 *     earlier claim on the same record (unless the fence went from {@code MAX_FENCE} to 1, or the
 *     record was forgotten). Pass it to a sink that can reject stale writers.
 * @param leaseExpiry when the lease lapses, judged by the backend's own clock (a server clock for
 *     Redis and SQL); only informative to callers on other clocks
 * @param claimToken the token of the claim call that won; a retried claim with the same token
 *     re-affirms this claim instead of locking itself out
 */
public record Claim(String key, long fence, Instant leaseExpiry, String claimToken) {

  /**
   * Validates the components.
   *
   * @throws NullPointerException if a component is null
   * @throws IllegalArgumentException if {@code fence} is outside 1..{@link LockBackend#MAX_FENCE}
   */
  public Claim {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(leaseExpiry, "leaseExpiry");
    Objects.requireNonNull(claimToken, "claimToken");
    if (fence < 1 || fence > LockBackend.MAX_FENCE) {
      throw new IllegalArgumentException(
          "fence must be 1.." + LockBackend.MAX_FENCE + ", but was " + fence);
    }
  }
}
