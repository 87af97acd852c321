package dev.pubsubworker.core;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one claim's lease alive while its work runs: extends it every lease/3 on the shared
 * scheduler, tracks the lease's expiry on the local clock, and declares the lease lost when an
 * extension finds the fence stale or when extensions keep failing until the lease has run out.
 *
 * <p>Thread-safety: {@link #tick} runs on the scheduler, {@link #finish} on the work's thread; both
 * take this object's monitor, which also guards the interrupt so that it can never hit the thread
 * after the work has finished.
 */
final class LeaseKeeper {

  private static final Logger log = LoggerFactory.getLogger(LeaseKeeper.class);

  private final LockBackend backend;
  private final Claim claim;
  private final Duration lease;
  private final Clock clock;
  private final ScheduledExecutorService scheduler;
  private final boolean heartbeat;
  private final boolean interruptOnLoss;
  private final Thread workThread;
  private final GuardEvents events;
  private final String keyForLogs;

  private volatile Instant confirmedExpiry;
  private volatile boolean lost;
  private boolean finished;
  private boolean interrupted;
  private @Nullable ScheduledFuture<?> next;

  LeaseKeeper(
      LockBackend backend,
      Claim claim,
      Duration lease,
      Instant claimSentAt,
      Clock clock,
      ScheduledExecutorService scheduler,
      boolean heartbeat,
      boolean interruptOnLoss,
      GuardEvents events,
      String keyForLogs) {
    this.backend = backend;
    this.claim = claim;
    this.lease = lease;
    this.clock = clock;
    this.scheduler = scheduler;
    this.heartbeat = heartbeat;
    this.interruptOnLoss = interruptOnLoss;
    this.workThread = Thread.currentThread();
    this.events = events;
    this.keyForLogs = keyForLogs;
    this.confirmedExpiry = claimSentAt.plus(lease);
  }

  /**
   * The scheduler a guard creates when none is passed in: two daemon threads named {@code
   * pubsub-worker-heartbeat-N}, dropping cancelled extensions at once.
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

  /** Schedules the first extension, if the heartbeat is on. */
  synchronized void start() {
    if (heartbeat) {
      schedule(interval());
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
      if (next != null) {
        next.cancel(false);
      }
      clearInterrupt = interrupted;
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
      if (next != null) {
        next.cancel(false);
      }
    }
  }

  private Duration interval() {
    return Duration.ofMillis(Math.max(1, lease.toMillis() / 3));
  }

  private void schedule(Duration delay) {
    try {
      next = scheduler.schedule(this::tick, Math.max(1, delay.toMillis()), TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      // The guard was closed while work still ran: no more extensions; the lease will lapse.
      log.warn("heartbeat scheduler refused the next extension; lease will lapse", e);
    }
  }

  private void tick() {
    synchronized (this) {
      if (finished || lost) {
        return;
      }
    }
    Instant sentAt = clock.instant();
    long started = System.nanoTime();
    boolean extended;
    try {
      extended = backend.extend(claim, lease);
      events.backendCall(GuardListener.Verb.EXTEND, started, true);
    } catch (RuntimeException e) {
      events.backendCall(GuardListener.Verb.EXTEND, started, false);
      onExtendFailed(e);
      return;
    }
    synchronized (this) {
      if (finished) {
        return;
      }
      if (extended) {
        confirmedExpiry = sentAt.plus(lease);
        schedule(interval());
      } else {
        markLost();
      }
    }
    if (extended) {
      events.leaseExtended(claim.key(), claim.fence());
    } else {
      log.warn(
          "lease lost for key {} (fence {}): another claim took the key while the work ran",
          keyForLogs,
          claim.fence());
      events.leaseLost(claim.key(), claim.fence(), GuardListener.LeaseLoss.FENCE_STALE);
    }
  }

  private void onExtendFailed(RuntimeException e) {
    Instant now = clock.instant();
    boolean nowLost;
    synchronized (this) {
      if (finished) {
        return;
      }
      nowLost = !now.isBefore(confirmedExpiry);
      if (nowLost) {
        markLost();
      } else {
        // Keep trying, faster than the regular interval, but check again no later than expiry.
        Duration untilExpiry = Duration.between(now, confirmedExpiry);
        Duration retry = Duration.ofMillis(Math.max(1, lease.toMillis() / 10));
        schedule(retry.compareTo(untilExpiry) < 0 ? retry : untilExpiry);
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
