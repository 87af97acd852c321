package dev.pubsubworker.runtime.pubsub;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The deliveries whose handling is in progress in one worker, so a graceful stop can wait for them
 * and then abandon the stragglers. Each delivery is settled (acked or nacked) exactly once, by
 * whichever of the dispatcher and the stop gets there first. Thread-safe.
 */
final class InFlight {

  /** One delivery in progress. */
  static final class Entry {
    final String subscription;
    final Thread thread;
    final Reply reply;
    final AtomicBoolean settled = new AtomicBoolean();
    volatile String key;
    volatile long fence;

    Entry(String subscription, Thread thread, Reply reply) {
      this.subscription = subscription;
      this.thread = thread;
      this.reply = reply;
    }

    /** Claims the right to ack or nack this delivery; true for exactly one caller. */
    boolean settle() {
      return settled.compareAndSet(false, true);
    }
  }

  private final AtomicLong ids = new AtomicLong();
  private final Map<Long, Entry> entries = new ConcurrentHashMap<>();
  private final Object changed = new Object();

  /** Registers a delivery handled on the current thread; remove it with {@link #remove}. */
  long add(Entry entry) {
    long id = ids.incrementAndGet();
    entries.put(id, entry);
    return id;
  }

  void remove(long id) {
    entries.remove(id);
    synchronized (changed) {
      changed.notifyAll();
    }
  }

  int size() {
    return entries.size();
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
        java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(changed, left);
      }
      return true;
    }
  }

  /** The deliveries still in progress. */
  List<Entry> snapshot() {
    return new ArrayList<>(entries.values());
  }
}
