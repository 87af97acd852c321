package dev.pubsubworker.core;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one claim's lease alive while its work runs: extends it every lease/3 through its guard's
 * {@link HeartbeatSweep}, tracks the lease's expiry on the local clock, and declares the lease lost
 * when an extension finds the fence stale or when extensions keep failing until the lease has run
 * out.
 *
 * <p>Thread-safety: {@link #sweep} runs on the sweep, {@link #tick} on the scheduler, {@link
 * #finish} on the work's thread; all take this object's monitor, which also guards the interrupt so
 * that it can never hit the thread after the work has finished.
 */
final class LeaseKeeper {

  private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);

  private final LockBackend backend;
  private final Claim claim;
  private final Duration lease;
  private final Clock clock;
  private final HeartbeatSweep sweep;
  private final boolean heartbeat;
  private final boolean interruptOnLoss;
  private final Thread workThread;
  private final GuardEvents events;
  private final Object keyForLogs;

  private volatile Instant confirmedExpiry;
  private volatile boolean lost;
  private boolean finished;
  private boolean interrupted;
  private boolean extending;
  // When the next extension is due; Instant.MAX until the keeper joins the sweep.
  private Instant due = Instant.MAX;

  LeaseKeeper(
      LockBackend backend,
      Claim claim,
      Duration lease,
      Instant claimSentAt,
      HeartbeatSweep sweep,
      boolean heartbeat,
      boolean interruptOnLoss,
      GuardEvents events,
      Object keyForLogs) {
    this.backend = backend;
    this.claim = claim;
    this.lease = lease;
    this.clock = sweep.clock();
    this.sweep = sweep;
    this.heartbeat = heartbeat;
    this.interruptOnLoss = interruptOnLoss;
    this.workThread = Thread.currentThread();
    this.events = events;
    this.keyForLogs = keyForLogs;
    this.confirmedExpiry = claimSentAt.plus(lease);
  }

  /**
   * The scheduler a guard creates when none is passed in: two daemon threads named {@code
   * pubsub-worker-heartbeat-N}, dropping cancelled sweeps at once.
   */
  static ScheduledExecutorService newHeartbeatScheduler() {
    AtomicInteger n = new AtomicInteger();
    ThreadFactory threads =
        r -> {
          Thread t = new Thread(r, "pubsub-worker-heartbeat-" + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        };
    ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(2, threads);
    executor.setRemoveOnCancelPolicy(true);
    return executor;
  }

  /** Joins the sweep with the first extension due in lease/3, if the heartbeat is on. */
  void start() {
    if (heartbeat) {
      Instant first;
      synchronized (this) {
        first = clock.instant().plus(interval());
        due = first;
      }
      sweep.join(this, first);
    }
  }

  boolean isLost() {
    return lost || !clock.instant().isBefore(confirmedExpiry);
  }

  Instant leaseExpiry() {
    return confirmedExpiry;
  }

  /**
   * Stops extending. After it returns no extension result is acted on and the work's thread is
   * never interrupted by this keeper; an interrupt this keeper delivered is cleared.
   */
  void finish() {
    boolean clearInterrupt;
    synchronized (this) {
      finished = true;
      clearInterrupt = interrupted;
    }
    if (heartbeat) {
      sweep.leave(this);
    }
    if (clearInterrupt && Thread.currentThread() == workThread) {
      // The interrupt was ours, aimed at the work; it must not leak into the caller's thread.
      Thread.interrupted();
    }
  }

  /**
   * Stops extending and declares the lease lost, from any thread (the claim is being given up while
   * its work still runs). Unlike {@link #finish}, it never touches the interrupt flag.
   */
  void abandon() {
    synchronized (this) {
      finished = true;
      lost = true;
    }
    if (heartbeat) {
      sweep.leave(this);
    }
  }

  /**
   * Called by the sweep at {@code now}: starts the extension if it is due and none is running.
   *
   * @return when this keeper next needs the sweep, or null if it does not (its extension is running
   *     and will plan the sweep itself, or it has ended)
   */
  @Nullable Instant sweep(Instant now) {
    synchronized (this) {
      if (finished || lost || extending) {
        return null;
      }
      if (due.isAfter(now)) {
        return due;
      }
      extending = true;
    }
    if (!sweep.submit(this::tick)) {
      synchronized (this) {
        extending = false;
      }
    }
    return null;
  }

  private Duration interval() {
    return Duration.ofMillis(Math.max(1, lease.toMillis() / 3));
  }

  /** Plans the next extension at {@code delay} from now. Caller holds the monitor. */
  private Instant planNext(Duration delay) {
    extending = false;
    due = clock.instant().plus(delay.isZero() ? Duration.ofMillis(1) : delay);
    return due;
  }

  private void tick() {
    synchronized (this) {
      if (finished || lost) {
        extending = false;
        return;
      }
    }
    Instant sentAt = clock.instant();
    long started = System.nanoTime();
    boolean extended;
    InvalidLockRecordException unreadable = null;
    try {
      extended = backend.extend(claim, lease);
      events.backendCall(GuardListener.Verb.EXTEND, started, true);
    } catch (InvalidLockRecordException e) {
      // The record was replaced by one the backend cannot read: this claim no longer holds it.
      events.backendCall(GuardListener.Verb.EXTEND, started, false);
      unreadable = e;
      extended = false;
    } catch (RuntimeException e) {
      events.backendCall(GuardListener.Verb.EXTEND, started, false);
      onExtendFailed(e);
      return;
    }
    Instant next = null;
    synchronized (this) {
      if (finished) {
        extending = false;
        return;
      }
      if (extended) {
        confirmedExpiry = sentAt.plus(lease);
        next = planNext(interval());
      } else {
        extending = false;
        markLost();
      }
    }
    if (extended) {
      sweep.sweepBy(Objects.requireNonNull(next, "next"));
      events.leaseExtended(claim.key(), claim.fence());
    } else {
      if (unreadable != null) {
        log.warn(
            "lease lost for key {} (fence {}): its record was replaced by one the store's backend"
                + " cannot read ({})",
            keyForLogs,
            claim.fence(),
            unreadable.problem());
      } else {
        log.warn(
            "lease lost for key {} (fence {}): another claim took the key while the work ran",
            keyForLogs,
            claim.fence());
      }
      events.leaseLost(claim.key(), claim.fence(), GuardListener.LeaseLoss.FENCE_STALE);
    }
  }

  private void onExtendFailed(RuntimeException e) {
    Instant now = clock.instant();
    boolean nowLost;
    Instant next = null;
    synchronized (this) {
      if (finished) {
        extending = false;
        return;
      }
      nowLost = !now.isBefore(confirmedExpiry);
      if (nowLost) {
        extending = false;
        markLost();
      } else {
        // Keep trying, faster than the regular interval, but check again no later than expiry.
        Duration untilExpiry = Duration.between(now, confirmedExpiry);
        Duration retry = Duration.ofMillis(Math.max(1, lease.toMillis() / 10));
        extending = false;
        due = now.plus(retry.compareTo(untilExpiry) < 0 ? retry : untilExpiry);
        next = due;
      }
    }
    if (nowLost) {
      log.warn(
          "lease lost for key {} (fence {}): the store could not be reached before it ran out",
          keyForLogs,
          claim.fence(),
          e);
      events.leaseLost(claim.key(), claim.fence(), GuardListener.LeaseLoss.STORE_UNREACHABLE);
    } else {
      sweep.sweepBy(Objects.requireNonNull(next, "next"));
      log.debug("lease extension failed for key {}; retrying", keyForLogs, e);
    }
  }

  /** Caller holds the monitor. */
  private void markLost() {
    lost = true;
    if (interruptOnLoss && !finished) {
      interrupted = true;
      workThread.interrupt();
    }
  }
}
