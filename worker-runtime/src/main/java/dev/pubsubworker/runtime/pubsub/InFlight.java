package dev.pubsubworker.runtime.pubsub;

import dev.pubsubworker.core.WorkContext;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;

/**
 * The deliveries whose handling is in progress in one worker, so a graceful stop can wait for them
 * and then abandon the stragglers. Each delivery is settled (acked or nacked) exactly once, by
 * whichever of the dispatcher and the stop gets there first.
 *
 * <p>Once {@link #beginStop()} has run, {@link #add} refuses every new delivery: the set of
 * deliveries that may run a handler is then fixed, and it is exactly {@link #snapshot()} at that
 * moment. Thread-safe.
 */
final class InFlight {

  /** What {@link #add} returns for a delivery refused because the worker is stopping. */
  static final long REFUSED = -1;

  /** One delivery in progress. */
  static final class Entry {
    final String subscription;
    final Thread thread;
    final Reply reply;
    final AtomicBoolean settled;

    /** When this run began ({@link System#nanoTime()}): the age of a running handler. */
    final long startedNanos = System.nanoTime();

    volatile String key;
    volatile long fence;

    /** Follows the delivery for tracing; {@link DeliveryObserver#NONE} when nothing does. */
    volatile DeliveryObserver observer = DeliveryObserver.NONE;

    /** The guard's context once the claim is won; what a stop abandons. */
    volatile WorkContext context;

    Entry(String subscription, Thread thread, Reply reply) {
      this(subscription, thread, reply, new AtomicBoolean());
    }

    /**
     * An entry for one run of a delivery that may run more than once (a parked delivery retrying
     * its claim): {@code settled} is the delivery's own flag, shared by all its runs.
     */
    Entry(String subscription, Thread thread, Reply reply, AtomicBoolean settled) {
      this.subscription = subscription;
      this.thread = thread;
      this.reply = reply;
      this.settled = settled;
    }

    /** Claims the right to ack or nack this delivery; true for exactly one caller. */
    boolean settle() {
      return settled.compareAndSet(false, true);
    }
  }

  private final AtomicLong ids = new AtomicLong();
  private final Map<Long, Entry> entries = new ConcurrentHashMap<>();
  // Adds share the read lock (they do not exclude each other); beginStop takes the write lock, so
  // once it returns no add can slip in. Removes take no lock and wake the stop's wait only while a
  // stop is in progress.
  private final ReadWriteLock gate = new ReentrantReadWriteLock();
  private final Object changed = new Object();
  private final AtomicInteger refused = new AtomicInteger();
  private volatile boolean stopping;

  /**
   * Registers a delivery handled on the current thread; remove it with {@link #remove}.
   *
   * @return its id, or {@link #REFUSED} if a stop has begun (the delivery must not run)
   */
  long add(Entry entry) {
    gate.readLock().lock();
    try {
      if (stopping) {
        refused.incrementAndGet();
        return REFUSED;
      }
      long id = ids.incrementAndGet();
      entries.put(id, entry);
      return id;
    } finally {
      gate.readLock().unlock();
    }
  }

  void remove(long id) {
    entries.remove(id);
    if (stopping) {
      synchronized (changed) {
        changed.notifyAll();
      }
    }
  }

  int size() {
    return entries.size();
  }

  /**
   * Refuses every later {@link #add}.
   *
   * @return how many deliveries were in progress at that moment: the only ones that can still run
   */
  int beginStop() {
    gate.writeLock().lock();
    try {
      stopping = true;
      return entries.size();
    } finally {
      gate.writeLock().unlock();
    }
  }

  /** How many deliveries {@link #add} refused since the stop began. */
  int refused() {
    return refused.get();
  }

  /**
   * Waits until no delivery is in progress or {@code timeout} passes.
   *
   * @return true if none is left
   */
  boolean awaitEmpty(Duration timeout) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (changed) {
      while (!entries.isEmpty()) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        TimeUnit.NANOSECONDS.timedWait(changed, left);
      }
      return true;
    }
  }

  /** The deliveries still in progress. */
  List<Entry> snapshot() {
    return new ArrayList<>(entries.values());
  }

  /**
   * The delivery in progress the longest, of {@code subscription} or of any when it is null.
   * Iterates over every delivery in progress (at most the handler threads).
   */
  Optional<Entry> oldest(String subscription) {
    Entry oldest = null;
    for (Entry e : entries.values()) {
      if ((subscription == null || subscription.equals(e.subscription))
          && (oldest == null || e.startedNanos - oldest.startedNanos < 0)) {
        oldest = e;
      }
    }
    return Optional.ofNullable(oldest);
  }
}
