package dev.pubsubworker.core;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One periodic sweep over a guard's live claims in place of a scheduled task per call: a call that
 * starts its heartbeat only joins a set (and plans a sweep when none is planned early enough), a
 * call that ends leaves it. The sweep runs when the earliest extension falls due, hands every due
 * {@link LeaseKeeper} to the scheduler as one extension task (so a slow store call never delays the
 * other claims' extensions), and plans itself for the next due time; with no live claims it plans
 * nothing. A call shorter than lease/3 therefore never schedules or cancels anything, unless it is
 * the first to need a sweep.
 *
 * <p>Thread-safe: the set is concurrent, the plan is guarded by this object's monitor, and each
 * keeper guards its own due time.
 */
final class HeartbeatSweep {

  private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);

  private final Clock clock;
  private final ScheduledExecutorService scheduler;
  // Sized for many concurrent calls, so that joining and leaving rarely contend on one bin.
  private final Set<LeaseKeeper> live = ConcurrentHashMap.newKeySet(1024);

  // The planned sweep, guarded by this; plannedAt is also read without the lock as a fast path.
  private @Nullable ScheduledFuture<?> planned;
  private long plannedSeq;
  private volatile @Nullable Instant plannedAt;

  HeartbeatSweep(Clock clock, ScheduledExecutorService scheduler) {
    this.clock = clock;
    this.scheduler = scheduler;
  }

  Clock clock() {
    return clock;
  }

  /** Adds a keeper whose first extension falls due at {@code due}. */
  void join(LeaseKeeper keeper, Instant due) {
    live.add(keeper);
    sweepBy(due);
  }

  /** Removes a keeper that no longer extends. */
  void leave(LeaseKeeper keeper) {
    live.remove(keeper);
  }

  /** Makes sure a sweep runs no later than {@code due}. */
  void sweepBy(Instant due) {
    Instant p = plannedAt;
    if (p != null && !p.isAfter(due)) {
      return;
    }
    synchronized (this) {
      if (plannedAt != null && !plannedAt.isAfter(due)) {
        return;
      }
      if (planned != null) {
        planned.cancel(false);
      }
      long seq = ++plannedSeq;
      long delay = Math.max(0, Duration.between(clock.instant(), due).toMillis());
      try {
        planned = scheduler.schedule(() -> sweep(seq), delay, TimeUnit.MILLISECONDS);
        plannedAt = due;
      } catch (RejectedExecutionException e) {
        // The guard was closed while work still ran: no more extensions; the leases will lapse.
        planned = null;
        plannedAt = null;
        log.warn("heartbeat scheduler refused the next sweep; live leases will lapse", e);
      }
    }
  }

  /** Hands one keeper's extension to the scheduler. */
  boolean submit(Runnable extension) {
    try {
      scheduler.execute(extension);
      return true;
    } catch (RejectedExecutionException e) {
      log.warn("heartbeat scheduler refused an extension; the lease will lapse", e);
      return false;
    }
  }

  private void sweep(long seq) {
    synchronized (this) {
      if (seq == plannedSeq) {
        planned = null;
        plannedAt = null;
      }
    }
    Instant now = clock.instant();
    Instant earliest = null;
    for (LeaseKeeper keeper : live) {
      Instant next = keeper.sweep(now);
      if (next != null && (earliest == null || next.isBefore(earliest))) {
        earliest = next;
      }
    }
    if (earliest != null) {
      sweepBy(earliest);
    }
  }
}
