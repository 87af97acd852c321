package dev.pubsubworker.core;

import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The arguments of one {@link LockBackend#claim} call.
 *
 * @param key the lock key; its validity is the backend's to judge ({@link
 *     LockBackend#validateKey}), so the only check here is that it is not null
 * @param lease how long the claim protects the key if it is neither extended, completed nor
 *     released; at least one millisecond
 * @param ttl how long a CLAIMED record is kept after its lease lapses before it may be physically
 *     removed (the record's {@code expiresAt} is {@code leaseExpiry + ttl} while CLAIMED). Size it
 *     so that lease + ttl outlives any holder that could still be alive: while the record exists
 *     the fence keeps rising, so a zombie is refused; once removed, a new record restarts at fence
 *     1. {@link #of} uses {@link IdempotencyGuard#DEFAULT_TTL}, the guard's default ttl.
 * @param claimToken the caller's id for this claim attempt: 1 to {@value #MAX_TOKEN_LENGTH}
 *     printable ASCII characters, unique per attempt. Retrying a claim whose response was lost with
 *     the same token re-affirms the claim (no self-lock, no second fence bump).
 * @param fingerprint an optional payload fingerprint stored with the claim (at most {@value
 *     #MAX_FINGERPRINT_LENGTH} characters), or {@code null}; returned to later claimers so that a
 *     key reused for a different payload can be reported
 */
public record ClaimRequest(
    String key, Duration lease, Duration ttl, String claimToken, @Nullable String fingerprint) {

  /** Longest claim token accepted. */
  public static final int MAX_TOKEN_LENGTH = 128;

  /** Longest fingerprint accepted. */
  public static final int MAX_FINGERPRINT_LENGTH = 256;

  /**
   * Validates the components.
   *
   * @throws NullPointerException if {@code key}, {@code lease}, {@code ttl} or {@code claimToken}
   *     is null
   * @throws IllegalArgumentException if a duration is shorter than one millisecond, or the token or
   *     fingerprint is malformed; the message names the component and the value's problem
   */
  public ClaimRequest {
    Objects.requireNonNull(key, "key");
    DurationChecks.requireAtLeastOneMilli("lease", lease);
    DurationChecks.requireAtLeastOneMilli("ttl", ttl);
    Objects.requireNonNull(claimToken, "claimToken");
    ClaimTokens.requireValid(claimToken);
    if (fingerprint != null && fingerprint.length() > MAX_FINGERPRINT_LENGTH) {
      throw new IllegalArgumentException(
          "fingerprint must be at most "
              + MAX_FINGERPRINT_LENGTH
              + " characters, but was "
              + fingerprint.length());
    }
  }

  /**
   * A request with the guard's default ttl ({@link IdempotencyGuard#DEFAULT_TTL}) and no
   * fingerprint.
   *
   * @throws IllegalArgumentException as the canonical constructor
   */
  public static ClaimRequest of(String key, Duration lease, String claimToken) {
    return new ClaimRequest(key, lease, IdempotencyGuard.DEFAULT_TTL, claimToken, null);
  }
}
