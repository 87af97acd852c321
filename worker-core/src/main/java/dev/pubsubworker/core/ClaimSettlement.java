package dev.pubsubworker.core;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

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
  private final Function<BatchLockBackend.CompleteRequest, CompletionStage<Boolean>>
      completeAsyncVerb;
  private final GuardEvents events;
  private final UnaryOperator<String> keyLogFormat;

  /**
   * @param completeVerb the store's complete: the backend's single verb, or a coalescer over its
   *     batch verb
   * @param completeAsyncVerb the same without waiting for a lone send ({@link
   *     LockBackend#completeAsync}, {@link Coalescer#submitAsync})
   */
  ClaimSettlement(
      LockBackend backend,
      Function<BatchLockBackend.CompleteRequest, Boolean> completeVerb,
      Function<BatchLockBackend.CompleteRequest, CompletionStage<Boolean>> completeAsyncVerb,
      GuardEvents events,
      UnaryOperator<String> keyLogFormat) {
    this.backend = backend;
    this.completeVerb = completeVerb;
    this.completeAsyncVerb = completeAsyncVerb;
    this.events = events;
    this.keyLogFormat = keyLogFormat;
  }

  /** Marks the key DONE for {@code ttl} after {@code lock}'s work succeeded. */
  <T> LockResult<T> complete(Claim claim, Duration ttl, T value, Duration workTime) {
    long started = System.nanoTime();
    boolean completed;
    try {
      completed = completeVerb.apply(new BatchLockBackend.CompleteRequest(claim, ttl));
    } catch (RuntimeException e) {
      return completeFailed(claim, value, started, e);
    }
    return answered(claim, value, workTime, started, completed);
  }

  /**
   * As {@link #complete}, without waiting for the store: the stage completes with the same result
   * once the store answered, maybe on the store client's thread (the log lines then carry the
   * caller's MDC all the same). It never completes exceptionally but for an {@link Error}.
   */
  <T> CompletionStage<LockResult<T>> completeAsync(
      Claim claim, Duration ttl, T value, Duration workTime) {
    long started = System.nanoTime();
    CompletionStage<Boolean> sent;
    try {
      sent = completeAsyncVerb.apply(new BatchLockBackend.CompleteRequest(claim, ttl));
    } catch (RuntimeException e) {
      return CompletableFuture.completedFuture(completeFailed(claim, value, started, e));
    }
    Thread caller = Thread.currentThread();
    Map<String, String> mdc = MDC.getCopyOfContextMap();
    return sent.handle(
        (completed, failure) -> {
          if (failure == null && Boolean.TRUE.equals(completed)) {
            return answered(claim, value, workTime, started, true);
          }
          // A line is logged: with the caller's MDC, also on the store client's thread.
          boolean elsewhere = Thread.currentThread() != caller;
          Map<String, String> own = elsewhere ? MDC.getCopyOfContextMap() : null;
          if (elsewhere && mdc != null) {
            MDC.setContextMap(mdc);
          }
          try {
            Throwable cause = Coalescer.unwrap(failure);
            if (cause instanceof Error error) {
              throw error;
            }
            if (cause != null) {
              return completeFailed(
                  claim,
                  value,
                  started,
                  cause instanceof RuntimeException re
                      ? re
                      : new LockBackendException("complete failed", cause));
            }
            return answered(claim, value, workTime, started, false);
          } finally {
            if (elsewhere) {
              if (own == null) {
                MDC.clear();
              } else {
                MDC.setContextMap(own);
              }
            }
          }
        });
  }

  /** The store answered a complete: DONE, or fenced out. */
  private <T> LockResult<T> answered(
      Claim claim, T value, Duration workTime, long started, boolean completed) {
    String key = claim.key();
    events.backendCall(GuardListener.Verb.COMPLETE, started, true);
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

  /** A complete failed after the work succeeded: logged and reported, never thrown. */
  private <T> LockResult<T> completeFailed(Claim claim, T value, long started, RuntimeException e) {
    String key = claim.key();
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
