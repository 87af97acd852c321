package dev.pubsubworker.core;

import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A key's record as {@link LockAdmin#inspect} read it.
 *
 * @param key the lock key
 * @param state CLAIMED or DONE
 * @param fence the current fencing token
 * @param leaseExpiry when the current (or last) lease lapses(d)
 * @param expiresAt end of the retention window: after it the record may be removed and a claim
 *     starts over; for DONE, the end of duplicate suppression
 * @param claimToken the token of the claim that holds or last won the key, or {@code null} when it
 *     was released
 * @param fingerprint the stored payload fingerprint, or {@code null}
 * @param observedAt the backend clock's reading when the record was read, so a reader on another
 *     clock can tell whether the lease or window has lapsed
 */
public record LockRecord(
    String key,
    LockState state,
    long fence,
    Instant leaseExpiry,
    Instant expiresAt,
    @Nullable String claimToken,
    @Nullable String fingerprint,
    Instant observedAt) {

  /** Validates the required components. */
  public LockRecord {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(leaseExpiry, "leaseExpiry");
    Objects.requireNonNull(expiresAt, "expiresAt");
    Objects.requireNonNull(observedAt, "observedAt");
  }

  /** Whether a claim made at {@link #observedAt()} would win (lapsed lease or window). */
  public boolean reclaimable() {
    return switch (state) {
      case CLAIMED -> !observedAt.isBefore(leaseExpiry);
      case DONE -> !observedAt.isBefore(expiresAt);
    };
  }
}
