package dev.pubsubworker.pubsub;

import dev.pubsubworker.core.DurationText;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.WorkContext;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The deliveries whose run is in progress in one receiver, so that a stop can wait for them and
 * then abandon the stragglers. Once {@link #beginStop()} has run, {@link #add} refuses every new
 * run: the deliveries that may still run a handler are then fixed, exactly those running at that
 * moment. Thread-safe.
 */
final class Running {

  private static final Logger log = LoggerFactory.getLogger(Running.class);

  /**
   * The thread name {@link #oldest} gives a run whose handler returned and whose complete is on its
   * way: no thread holds it.
   */
  static final String AWAITING_STORE = "(none: awaiting the lock store's reply)";

  private final String subscription;
  private final ReceiverListener listener;
  private final Set<Delivery> deliveries = ConcurrentHashMap.newKeySet();
  // Adds share the read lock (they do not exclude each other); beginStop takes the write lock, so
  // once it returns no add can slip in. Removes take no lock and wake the stop's wait only while a
  // stop is in progress.
  private final ReadWriteLock gate = new ReentrantReadWriteLock();
  private final Object changed = new Object();
  private final AtomicInteger refused = new AtomicInteger();
  private volatile boolean stopping;

  Running(String subscription, ReceiverListener listener) {
    this.subscription = subscription;
    this.listener = listener;
  }

  /**
   * Registers a run of {@code d} on the current thread, begun at {@code now}; end it with {@link
   * #remove}.
   *
   * @return false if a stop has begun: the delivery must not run
   */
  boolean add(Delivery d, Instant now) {
    gate.readLock().lock();
    try {
      if (stopping) {
        refused.incrementAndGet();
        return false;
      }
      d.runStarted(Thread.currentThread(), now);
      deliveries.add(d);
      return true;
    } finally {
      gate.readLock().unlock();
    }
  }

  void remove(Delivery d) {
    d.runEnded();
    deliveries.remove(d);
    if (stopping) {
      synchronized (changed) {
        changed.notifyAll();
      }
    }
  }

  int size() {
    return deliveries.size();
  }

  /** The run in progress that began first, if any is. */
  Optional<RunningDelivery> oldest() {
    RunningDelivery oldest = null;
    for (Delivery d : deliveries) {
      Instant since = d.runningSince();
      Thread thread = d.thread();
      if (since != null && (oldest == null || since.isBefore(oldest.since()))) {
        oldest =
            new RunningDelivery(
                d.message().messageId(), thread == null ? AWAITING_STORE : thread.getName(), since);
      }
    }
    return Optional.ofNullable(oldest);
  }

  /** When the oldest run in progress began, if any is. */
  Optional<Instant> oldestSince() {
    return oldest().map(RunningDelivery::since);
  }

  /**
   * Refuses every later {@link #add}.
   *
   * @return how many runs were in progress at that moment: the only ones that can still run
   */
  int beginStop() {
    gate.writeLock().lock();
    try {
      stopping = true;
      return deliveries.size();
    } finally {
      gate.writeLock().unlock();
    }
  }

  /** How many runs {@link #add} refused since the stop began. */
  int refused() {
    return refused.get();
  }

  /**
   * Waits until no run is in progress or {@code timeout} passes.
   *
   * @return true if none is left
   */
  boolean awaitEmpty(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (changed) {
      while (!deliveries.isEmpty()) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(changed, left);
      }
      return true;
    }
  }

  /**
   * Abandons every run still in progress: takes each delivery's settlement away from its run,
   * releases its claim through {@code guard} (so its key is reclaimable at once and the claim can
   * never complete), interrupts its thread and nacks it ({@link Outcome#ABANDONED}). The releases
   * run on a thread of their own and get at most {@code releaseBudget}, so a hung store cannot hold
   * the stop; a claim not released by then lapses with its lease.
   *
   * @param guard the guard the claims were made with; null when the receiver runs unguarded
   */
  GuardedReceiver.Abandoned abandonAll(@Nullable IdempotencyGuard guard, Duration releaseBudget) {
    List<Delivery> stragglers = new ArrayList<>();
    for (Delivery d : new ArrayList<>(deliveries)) {
      // Settle first: from here on the run neither acks it nor starts its handler.
      if (d.abandon()) {
        stragglers.add(d);
      }
    }
    if (stragglers.isEmpty()) {
      return new GuardedReceiver.Abandoned(0, 0);
    }
    // Release before interrupting, so the handler's own failure path finds the claim abandoned and
    // leaves it alone.
    Set<Delivery> released = ConcurrentHashMap.newKeySet();
    Thread releaser =
        new Thread(
            () -> {
              for (Delivery d : stragglers) {
                WorkContext context = d.context();
                if (context != null && guard != null) {
                  try {
                    if (guard.abandon(context)) {
                      released.add(d);
                    }
                  } catch (RuntimeException failure) {
                    log.warn(
                        "could not release the claim of an abandoned handler on subscription {};"
                            + " it lapses with its lease: {}",
                        subscription,
                        failure.toString());
                  }
                }
                interrupt(d);
              }
            },
            "pubsub-worker-release-abandoned");
    releaser.setDaemon(true);
    releaser.start();
    try {
      releaser.join(Math.max(1, releaseBudget.toMillis()));
    } catch (InterruptedException ie) {
      Thread.currentThread().interrupt();
    }
    if (releaser.isAlive()) {
      log.warn(
          "releasing abandoned claims took longer than {}; the rest lapse with their lease",
          DurationText.of(releaseBudget));
    }
    for (Delivery d : stragglers) {
      boolean completing = d.thread() == null;
      interrupt(d);
      d.nackAbandoned();
      listener.settled(subscription, Outcome.ABANDONED, Duration.ZERO);
      if (completing) {
        log.warn(
            "handler on subscription {} had returned but the lock store had not answered its"
                + " complete by the end of the shutdown grace: message nacked (its redelivery is a"
                + " duplicate if DONE was written, else it runs again once the lease lapses)",
            subscription);
        continue;
      }
      log.warn(
          "handler on subscription {} still running after the shutdown grace: interrupted, {},"
              + " message nacked",
          subscription,
          released.contains(d)
              ? "claim released"
              : d.context() == null
                  ? "no claim held"
                  : "claim not released (it ended meanwhile, or lapses with its lease)");
    }
    return new GuardedReceiver.Abandoned(stragglers.size(), released.size());
  }

  private static void interrupt(Delivery d) {
    Thread t = d.thread();
    if (t != null) {
      t.interrupt();
    }
  }
}
