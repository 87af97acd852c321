package dev.pubsubworker.core;

import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What {@link LockBackend#claim} found. Exactly one of three answers; a store failure is never one
 * of them but a {@link LockBackendException}.
 */
public sealed interface ClaimResult
    permits ClaimResult.Won, ClaimResult.AlreadyDone, ClaimResult.HeldByOther {

  /**
   * The caller now holds the key: the record was absent (fence 1), its lease or suppression window
   * had lapsed (fence raised by one), or it was the caller's own claim retried with the same claim
   * token (fence unchanged).
   *
   * @param claim the claim to pass to complete, release and extend
   */
  record Won(Claim claim) implements ClaimResult {
    /** Validates the component. */
    public Won {
      Objects.requireNonNull(claim, "claim");
    }
  }

  /**
   * The key is DONE and its suppression window has not lapsed: the work already ran.
   *
   * @param fingerprint the payload fingerprint stored by the claim that completed, or {@code null}
   *     when it stored none
   */
  record AlreadyDone(@Nullable String fingerprint) implements ClaimResult {}

  /**
   * Another claim holds the key and its lease is live.
   *
   * @param leaseExpiry when that lease lapses, on the backend's clock
   * @param fingerprint the payload fingerprint stored by the holder, or {@code null} when it stored
   *     none
   */
  record HeldByOther(Instant leaseExpiry, @Nullable String fingerprint) implements ClaimResult {
    /** Validates the components. */
    public HeldByOther {
      Objects.requireNonNull(leaseExpiry, "leaseExpiry");
    }
  }
}
