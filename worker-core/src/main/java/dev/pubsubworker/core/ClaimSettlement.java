package dev.pubsubworker.core;

import java.time.Duration;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The store calls that settle a claim once its work has ended or been abandoned: write DONE,
 * release, and the error policy around them. After the work succeeded nothing here throws: a
 * failure is logged at ERROR and reported as a {@link Completion}, because re-raising would make
 * the caller retry a side effect that already happened.
 *
 * <p>Thread-safe (stateless between calls).
 */
final class ClaimSettlement {

  // Under the guard's logger: its lines are the guard's, and log configuration and alerts name it.
  private static final Logger log = LoggerFactory.getLogger(IdempotencyGuard.class);

  private final LockBackend backend;
  private final Function<BatchLockBackend.CompleteRequest, Boolean> completeVerb;
  private final GuardEvents events;
  private final UnaryOperator<String> keyLogFormat;

  /**
   * @param completeVerb the store's complete: the backend's single verb, or a coalescer over its
   *     batch verb
   */
  ClaimSettlement(
      LockBackend backend,
      Function<BatchLockBackend.CompleteRequest, Boolean> completeVerb,
      GuardEvents events,
      UnaryOperator<String> keyLogFormat) {
    this.backend = backend;
    this.completeVerb = completeVerb;
    this.events = events;
    this.keyLogFormat = keyLogFormat;
  }

  /** Marks the key DONE for {@code ttl} after {@code lock}'s work succeeded. */
  <T> LockResult<T> complete(Claim claim, Duration ttl, T value, Duration workTime) {
    String key = claim.key();
    long started = System.nanoTime();
    boolean completed;
    try {
      completed = completeVerb.apply(new BatchLockBackend.CompleteRequest(claim, ttl));
      events.backendCall(GuardListener.Verb.COMPLETE, started, true);
    } catch (RuntimeException e) {
      events.backendCall(GuardListener.Verb.COMPLETE, started, false);
      log.error(
          "complete failed after the work for key {} (fence {}) succeeded; reporting success so the"
              + " side effect is not repeated, but DONE may be missing and a redelivery may run the"
              + " work again once the lease lapses",
          new KeyForLogs(key, keyLogFormat),
          claim.fence(),
          e);
      events.completeFailed(key, claim.fence(), e);
      return new LockResult.Executed<>(value, claim.fence(), Completion.COMPLETE_FAILED);
    }
    if (!completed) {
      log.error(
          "FENCED OUT: the work for key {} (fence {}) succeeded but its lease lapsed and another"
              + " claim took the key before DONE was written; the work may run twice. Lengthen the"
              + " lease or check the heartbeat",
          new KeyForLogs(key, keyLogFormat),
          claim.fence());
      events.fencedOut(key, claim.fence());
      return new LockResult.Executed<>(value, claim.fence(), Completion.FENCED_OUT);
    }
    events.completed(key, claim.fence(), workTime);
    return new LockResult.Executed<>(value, claim.fence(), Completion.COMPLETED);
  }

  /**
   * Reports the end of transactional work, whose transaction already wrote DONE ({@code COMMITTED})
   * or was rolled back because the claim was fenced out at commit.
   */
  <T> LockResult<T> committed(
      Claim claim,
      T value,
      TransactionalLockBackend.TransactionOutcome outcome,
      Duration workTime) {
    String key = claim.key();
    if (outcome == TransactionalLockBackend.TransactionOutcome.FENCED_OUT_ROLLED_BACK) {
      log.error(
          "fenced out at commit for key {} (fence {}): the lease lapsed and another claim took the"
              + " key; the work's transaction was rolled back and the new holder runs it",
          new KeyForLogs(key, keyLogFormat),
          claim.fence());
      events.fencedOutRolledBack(key, claim.fence());
      return new LockResult.Executed<>(value, claim.fence(), Completion.FENCED_OUT_ROLLED_BACK);
    }
    events.completed(key, claim.fence(), workTime);
    return new LockResult.Executed<>(value, claim.fence(), Completion.COMPLETED);
  }

  /**
   * Releases the claim after {@code mutex}'s work succeeded. A failure is logged and reported, not
   * thrown: the work ran, and the key stays held until its lease lapses.
   */
  void releaseAfterSuccess(Claim claim) {
    long started = System.nanoTime();
    try {
      backend.release(claim);
      events.backendCall(GuardListener.Verb.RELEASE, started, true);
      events.released(claim.key(), claim.fence(), false);
    } catch (RuntimeException e) {
      events.backendCall(GuardListener.Verb.RELEASE, started, false);
      log.error(
          "release failed after the mutex work for key {} (fence {}) succeeded; reporting success,"
              + " the key stays held until its lease lapses",
          new KeyForLogs(claim.key(), keyLogFormat),
          claim.fence(),
          e);
      events.completeFailed(claim.key(), claim.fence(), e);
    }
  }

  /**
   * Releases the claim after the work threw, so a retry can run at once. A release failure is added
   * to {@code failure} as suppressed: the work's failure is what the caller must see, and the lease
   * lapses on its own.
   */
  void releaseAfterFailure(Claim claim, Throwable failure) {
    long started = System.nanoTime();
    try {
      backend.release(claim);
      events.backendCall(GuardListener.Verb.RELEASE, started, true);
      events.released(claim.key(), claim.fence(), true);
    } catch (RuntimeException e) {
      events.backendCall(GuardListener.Verb.RELEASE, started, false);
      failure.addSuppressed(e);
      log.warn(
          "release after a failed work for key {} (fence {}) failed; the key is reclaimable once"
              + " its lease lapses",
          new KeyForLogs(claim.key(), keyLogFormat),
          claim.fence(),
          e);
    }
  }

  /**
   * Releases the claim of abandoned work, or a claim won for a caller that was interrupted while
   * its batched claim was in flight (it will never run the work, so the key is made reclaimable at
   * once instead of when the lease lapses).
   *
   * @throws RuntimeException what the store threw (typically {@link LockBackendException})
   */
  void releaseAbandoned(Claim claim) {
    long started = System.nanoTime();
    try {
      backend.release(claim);
    } catch (RuntimeException e) {
      events.backendCall(GuardListener.Verb.RELEASE, started, false);
      throw e;
    }
    events.backendCall(GuardListener.Verb.RELEASE, started, true);
    events.released(claim.key(), claim.fence(), true);
  }
}
