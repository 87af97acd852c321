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
 * when an extension finds the fence stale, when extensions keep failing until the lease has run
 * out, or when the lease runs out on the local clock before an extension confirmed it ({@link
 * GuardListener.LeaseLoss#EXPIRED}: the claim took the whole lease, an extension was still waiting
 * for the store, the heartbeat was late, or with the heartbeat off the work outlived the lease).
 * Every loss is declared once, with a WARN (that last kind at most one per {@link
 * #EXPIRED_WARNING_INTERVAL} per guard, saying how many were held back) and a {@link
 * GuardListener#leaseLost} event; a lost lease stays lost.
 *
 * <p>The first extension falls due lease/3 after the claim was <em>sent</em>, not after the work
 * started: a claim that took most of the lease is extended at once instead of sleeping past it.
 *
 * <p>Thread-safety: {@link #sweep} runs on the sweep, {@link #tick} on the scheduler, {@link
 * #finish} on the work's thread; all take this object's monitor, which also guards the interrupt so
 * that it can never hit the thread after the work has finished.
 */
final class LeaseKeeper {

  private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);

  /** The least time between two WARN lines about leases that ran out on the clock, per guard. */
  static final Duration EXPIRED_WARNING_INTERVAL = Duration.ofSeconds(10);

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
  private final RepeatedWarning expiredWarnings;
  private final Instant claimSentAt;

  private volatile Instant confirmedExpiry;
  private volatile boolean lost;
  private boolean finished;
  private boolean interrupted;
  private boolean extending;
  // The failure of the latest extension, until one succeeds; guarded by this.
  private @Nullable RuntimeException lastFailure;
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
      Object keyForLogs,
      RepeatedWarning expiredWarnings) {
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
    this.expiredWarnings = expiredWarnings;
    this.claimSentAt = claimSentAt;
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

  /**
   * Joins the sweep, if the heartbeat is on, with the first extension due lease/3 after the claim
   * was sent (at once if that has passed). A lease the claim call used up entirely is lost here.
   */
  void start() {
    Instant now = clock.instant();
    if (!now.isBefore(confirmedExpiry)) {
      expired(
          "before the work started: the claim call took "
              + seconds(Duration.between(claimSentAt, now))
              + " of the "
              + seconds(lease)
              + " lease");
      return;
    }
    if (heartbeat) {
      Instant first;
      synchronized (this) {
        Instant planned = claimSentAt.plus(interval());
        first = planned.isAfter(now) ? planned : now;
        due = first;
      }
      sweep.join(this, first);
    }
  }

  /**
   * Whether the lease is lost. A lease found run out on the clock here, before anything else
   * noticed (the heartbeat is off, say), is declared lost now, so the work never sees a loss that
   * was not reported.
   */
  boolean isLost() {
    if (lost) {
      return true;
    }
    if (clock.instant().isBefore(confirmedExpiry)) {
      return false;
    }
    expired(heartbeat ? "before an extension confirmed it" : "while the work ran (heartbeat off)");
    return true;
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
   * Called by the sweep at {@code now}: starts the extension if it is due and none is running, and
   * declares the lease lost if it has run out meanwhile (an extension that has not confirmed by
   * then is too late).
   *
   * @return when this keeper next needs the sweep (its next extension, or, while one is running,
   *     the lease's expiry), or null if it does not (it has ended)
   */
  @Nullable Instant sweep(Instant now) {
    boolean inFlight;
    Instant expiry;
    synchronized (this) {
      if (finished || lost) {
        return null;
      }
      inFlight = extending;
      expiry = confirmedExpiry;
      if (now.isBefore(expiry)) {
        if (extending) {
          return expiry; // check again when the lease runs out, if it is still running then
        }
        if (due.isAfter(now)) {
          return due;
        }
        extending = true;
      }
    }
    if (!now.isBefore(expiry)) {
      expired(
          inFlight
              ? "while its extension was still waiting for the store"
              : "before its next extension could be sent");
      return null;
    }
    if (!sweep.submit(this::tick)) {
      synchronized (this) {
        extending = false;
      }
      return null;
    }
    return expiry;
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
    if (!sentAt.isBefore(confirmedExpiry)) {
      synchronized (this) {
        extending = false;
      }
      expired("before its next extension could be sent");
      return;
    }
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
      if (finished || lost) {
        extending = false; // a lease declared lost meanwhile stays lost
        return;
      }
      if (extended) {
        lastFailure = null;
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
      if (finished || lost) {
        extending = false;
        return;
      }
      nowLost = !now.isBefore(confirmedExpiry);
      if (nowLost) {
        extending = false;
        markLost();
      } else {
        lastFailure = e;
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

  /**
   * Declares the lease lost because it ran out on the clock ({@code when} says how), unless it is
   * lost already or the work has ended: once, with a rate-limited WARN and the event.
   */
  private void expired(String when) {
    RuntimeException failure;
    synchronized (this) {
      if (lost || finished) {
        return;
      }
      extending = false;
      markLost();
      failure = lastFailure;
    }
    if (heartbeat) {
      sweep.leave(this);
    }
    if (failure != null) {
      // Extensions kept failing until the clock ran out: the store could not be reached.
      log.warn(
          "lease lost for key {} (fence {}): the store could not be reached before it ran out",
          keyForLogs,
          claim.fence(),
          failure);
      events.leaseLost(claim.key(), claim.fence(), GuardListener.LeaseLoss.STORE_UNREACHABLE);
      return;
    }
    long suppressed = expiredWarnings.check();
    if (suppressed >= 0) {
      log.warn(
          "lease lost for key {} (fence {}): it ran out on this worker's clock at {} {}; another"
              + " worker may claim the key{}",
          keyForLogs,
          claim.fence(),
          confirmedExpiry,
          when,
          RepeatedWarning.note(suppressed));
    } else {
      log.debug(
          "lease lost for key {} (fence {}): it ran out on this worker's clock {}",
          keyForLogs,
          claim.fence(),
          when);
    }
    events.leaseLost(claim.key(), claim.fence(), GuardListener.LeaseLoss.EXPIRED);
  }

  private static String seconds(Duration d) {
    return String.format(java.util.Locale.ROOT, "%.1fs", d.toMillis() / 1000.0);
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
