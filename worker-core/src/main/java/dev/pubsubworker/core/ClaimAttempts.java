package dev.pubsubworker.core;

import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The claim phase of a guarded call: the claim with retries, and what a refused claim means for
 * {@code lock} and {@code mutex}.
 *
 * <p>A claim that fails in the store ({@link LockBackendException}) is retried up to {@code
 * retries} times with the same request, so with the same claim token, after each wait of {@code
 * backoff} (the guard's: doubling, capped at {@link IdempotencyGuard#CLAIM_RETRY_BACKOFF_CAP}, no
 * jitter). Retrying with the same token is safe: if the failed attempt was written and only its
 * response was lost, the retry re-affirms that claim instead of locking the caller out until the
 * lease lapses.
 *
 * <p>Thread-safe (stateless between calls).
 */
final class ClaimAttempts {

  // Under the guard's logger: its lines are the guard's, and log configuration and alerts name it.
  private static final Logger log = LoggerFactory.getLogger(IdempotencyGuard.class);

  private final Function<ClaimRequest, ClaimResult> claimVerb;
  private final GuardEvents events;
  private final int retries;
  private final Backoff backoff;
  private final UnaryOperator<String> keyLogFormat;

  /**
   * @param claimVerb the store's claim: the backend's single verb, or a coalescer over its batch
   *     verb
   */
  ClaimAttempts(
      Function<ClaimRequest, ClaimResult> claimVerb,
      GuardEvents events,
      int retries,
      Backoff backoff,
      UnaryOperator<String> keyLogFormat) {
    this.claimVerb = claimVerb;
    this.events = events;
    this.retries = retries;
    this.backoff = backoff;
    this.keyLogFormat = keyLogFormat;
  }

  /**
   * Claims {@code key} with the call's lease, ttl and fingerprint under a fresh claim token.
   *
   * @throws LockBackendException as {@link #claim(ClaimRequest)}
   * @throws IllegalArgumentException if the fingerprint is too long
   */
  ClaimResult claim(String key, CallOptions o) {
    return claim(
        new ClaimRequest(key, o.mergedLease(), o.mergedTtl(), ClaimTokens.next(), o.fingerprint));
  }

  /**
   * Claims, retrying store failures; reports each attempt and a won claim to the listeners.
   *
   * @throws LockBackendException the last failure once the retries are spent, or the current one if
   *     the thread is interrupted (then no retry; the interrupt stays set) or the record is
   *     unreadable ({@link InvalidLockRecordException}, never retried)
   */
  ClaimResult claim(ClaimRequest request) {
    for (int attempt = 0; ; attempt++) {
      long started = System.nanoTime();
      try {
        ClaimResult result = claimVerb.apply(request);
        events.backendCall(GuardListener.Verb.CLAIM, started, true);
        if (result instanceof ClaimResult.Won won) {
          events.claimed(request.key(), won.claim().fence(), won.claim().fence() > 1);
        }
        return result;
      } catch (LockBackendException e) {
        events.backendCall(GuardListener.Verb.CLAIM, started, false);
        // An unreadable record stays unreadable: retrying would only delay the caller.
        if (attempt >= retries
            || e instanceof InvalidLockRecordException
            || Thread.currentThread().isInterrupted()) {
          throw e;
        }
        log.debug(
            "claim failed for key {}; retrying with the same token",
            new KeyForLogs(request.key(), keyLogFormat));
        try {
          TimeUnit.NANOSECONDS.sleep(backoff.delay(attempt).toNanos());
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          e.addSuppressed(interrupted);
          throw e;
        }
      }
    }
  }

  /**
   * What a claim {@code lock} did not win means: a DONE key is a duplicate (reported, and the
   * call's {@code onDuplicate} hook run); a live claim is "retry later". A differing fingerprint is
   * reported first, and with {@link FingerprintPolicy#REJECT} thrown.
   *
   * @throws KeyInProgressException if another live claim holds the key
   * @throws FingerprintMismatchException if the fingerprints differ and the policy rejects
   */
  <T> LockResult<T> duplicateOrThrow(String key, CallOptions o, ClaimResult refused) {
    if (refused instanceof ClaimResult.HeldByOther held) {
      checkFingerprint(key, o, held.fingerprint());
      throw heldByOther(key, held);
    }
    checkFingerprint(key, o, ((ClaimResult.AlreadyDone) refused).fingerprint());
    log.debug(
        "key {} is DONE; skipping the work as a duplicate", new KeyForLogs(key, keyLogFormat));
    events.duplicate(key);
    if (o.onDuplicate != null) {
      try {
        o.onDuplicate.accept(key);
      } catch (RuntimeException e) {
        log.warn(
            "onDuplicate hook threw for key {}; ignored", new KeyForLogs(key, keyLogFormat), e);
      }
    }
    return new LockResult.Duplicate<>(key);
  }

  /** What a claim {@code mutex} did not win means: "retry later", whether held or DONE. */
  KeyInProgressException refusalForMutex(String key, ClaimResult refused) {
    if (refused instanceof ClaimResult.HeldByOther held) {
      return heldByOther(key, held);
    }
    events.contended(key, null);
    return new KeyInProgressException(key, KeyInProgressException.Reason.DONE, null);
  }

  private KeyInProgressException heldByOther(String key, ClaimResult.HeldByOther held) {
    events.contended(key, held.leaseExpiry());
    return new KeyInProgressException(
        key, KeyInProgressException.Reason.HELD_BY_OTHER, held.leaseExpiry());
  }

  private void checkFingerprint(String key, CallOptions o, @Nullable String stored) {
    if (o.fingerprint == null || stored == null || o.fingerprint.equals(stored)) {
      return;
    }
    log.warn(
        "payload fingerprint for key {} differs from the stored one: the key is reused for a"
            + " different payload (a key collision or a producer bug), not a duplicate",
        new KeyForLogs(key, keyLogFormat));
    events.fingerprintMismatch(key);
    if (o.fingerprintPolicy == FingerprintPolicy.REJECT) {
      throw new FingerprintMismatchException(key);
    }
  }
}
