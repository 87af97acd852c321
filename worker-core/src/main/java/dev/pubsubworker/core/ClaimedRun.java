package dev.pubsubworker.core;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.UnaryOperator;

/**
 * The run of a call's work under a claim it won: the skeleton {@code lock} and {@code mutex} share.
 * It starts the claim's {@link LeaseKeeper}, hands the work a {@link GuardWorkContext}, releases
 * the claim if the work throws (unless it was abandoned, whose claim is already released), and
 * otherwise stops the heartbeat and settles the claim: DONE for {@code lock}, a release for {@code
 * mutex}.
 *
 * <p>Thread-safe: one instance serves every call of its guard.
 */
final class ClaimedRun {

  private final LockBackend backend;
  private final Clock clock;
  private final HeartbeatSweep heartbeats;
  private final GuardEvents events;
  private final ClaimSettlement settlement;
  private final UnaryOperator<String> keyLogFormat;
  private final RepeatedWarning expiredWarnings;

  ClaimedRun(
      LockBackend backend,
      Clock clock,
      ScheduledExecutorService scheduler,
      GuardEvents events,
      ClaimSettlement settlement,
      UnaryOperator<String> keyLogFormat) {
    this.backend = backend;
    this.clock = clock;
    this.heartbeats = new HeartbeatSweep(clock, scheduler);
    this.events = events;
    this.settlement = settlement;
    this.keyLogFormat = keyLogFormat;
    this.expiredWarnings = new RepeatedWarning(LeaseKeeper.EXPIRED_WARNING_INTERVAL, clock);
  }

  /**
   * Runs {@code lock}'s work and marks the key DONE (in the work's transaction if {@code
   * o.transactional}). Abandoned work that returns is completed anyway: the store finds its fence
   * stale and the result says {@link Completion#FENCED_OUT}.
   */
  <T, E extends Exception> LockResult<T> lock(
      Claim claim, CallOptions o, Instant sentAt, GuardedWork<T, E> work) throws E {
    if (o.mergedTransactional()) {
      return run(
          claim,
          o,
          sentAt,
          context -> runInTransaction(context, o, work),
          (ran, ended, workTime) ->
              settlement.committed(claim, ran.value(), ran.outcome(), workTime));
    }
    return run(
        claim,
        o,
        sentAt,
        work::run,
        (value, ended, workTime) -> settlement.complete(claim, o.mergedTtl(), value, workTime));
  }

  /**
   * As {@link #lock}, without waiting for DONE: the work runs on the calling thread, the complete
   * is sent, and the stage completes once the store answered. Transactional work commits DONE in
   * its own transaction, so its stage is complete on return.
   */
  <T, E extends Exception> CompletionStage<LockResult<T>> lockAsync(
      Claim claim, CallOptions o, Instant sentAt, GuardedWork<T, E> work) throws E {
    if (o.mergedTransactional()) {
      return CompletableFuture.completedFuture(lock(claim, o, sentAt, work));
    }
    return run(
        claim,
        o,
        sentAt,
        work::run,
        (value, ended, workTime) ->
            settlement.completeAsync(claim, o.mergedTtl(), value, workTime));
  }

  /** Runs {@code mutex}'s work and releases the claim, unless it was abandoned (released then). */
  <T, E extends Exception> T mutex(
      Claim claim, CallOptions o, Instant sentAt, GuardedWork<T, E> work) throws E {
    return run(
        claim,
        o,
        sentAt,
        work::run,
        (value, ended, workTime) -> {
          if (ended) {
            settlement.releaseAfterSuccess(claim);
          }
          return value;
        });
  }

  /** The work of one call, on the caller's thread, with the call's context. */
  @FunctionalInterface
  private interface Body<R, E extends Exception> {
    R run(GuardWorkContext context) throws E;
  }

  /** Settles a claim whose work returned; {@code ended} is false if the work was abandoned. */
  @FunctionalInterface
  private interface Settle<R, V> {
    V settle(R ran, boolean ended, Duration workTime);
  }

  private <R, V, E extends Exception> V run(
      Claim claim, CallOptions o, Instant sentAt, Body<R, E> body, Settle<R, V> settle) throws E {
    LeaseKeeper keeper =
        new LeaseKeeper(
            backend,
            claim,
            o.mergedLease(),
            sentAt,
            heartbeats,
            o.mergedHeartbeat(),
            o.mergedInterruptOnLeaseLoss(),
            events,
            new KeyForLogs(claim.key(), keyLogFormat),
            expiredWarnings);
    keeper.start();
    GuardWorkContext context = new GuardWorkContext(this, claim, keeper, clock.instant());
    long workStarted = System.nanoTime();
    R ran;
    try {
      ran = body.run(context);
    } catch (Throwable t) {
      keeper.finish();
      if (context.end()) {
        settlement.releaseAfterFailure(claim, t);
      }
      throw t;
    }
    keeper.finish();
    boolean ended = context.end();
    return settle.settle(ran, ended, Duration.ofNanos(System.nanoTime() - workStarted));
  }

  @SuppressWarnings("unchecked") // the body throws only what the work throws: E or unchecked
  private <T, E extends Exception> TransactionalLockBackend.Result<T> runInTransaction(
      GuardWorkContext context, CallOptions o, GuardedWork<T, E> work) throws E {
    TransactionalLockBackend tx = (TransactionalLockBackend) backend;
    try {
      return tx.runAndComplete(
          context.claim(),
          o.mergedTtl(),
          resource -> {
            context.shareResource(resource);
            try {
              return work.run(context);
            } finally {
              context.shareResource(null);
              // Stop extending before DONE is written in this transaction.
              context.keeper().finish();
            }
          });
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw (E) e;
    }
  }
}
