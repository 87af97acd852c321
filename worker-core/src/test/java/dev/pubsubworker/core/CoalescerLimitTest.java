package dev.pubsubworker.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;

/**
 * The coalescer's adaptive limit of flushes in flight: it rises on a store that serves overlapping
 * round trips side by side (their time does not grow with their number), and stays low, batching
 * the callers, on a store that serves one round trip at a time. Each test drives 12 callers through
 * a fake store whose round trips take a fixed time; nothing asserts a duration.
 */
class CoalescerLimitTest {

  private static final int CALLERS = 12;
  private static final int CALLS = 100;

  /**
   * A fake store: every round trip takes {@code nanos}, plus {@code nanosPerOther} for each other
   * round trip in flight when it starts; with {@code serial}, one at a time.
   */
  private static final class Store implements Coalescer.Verbs<String, String> {
    final long nanos;
    final long nanosPerOther;
    final ReentrantLock serial;
    final AtomicInteger inFlight = new AtomicInteger();
    final AtomicInteger singles = new AtomicInteger();
    final AtomicInteger batches = new AtomicInteger();

    Store(long nanos, boolean serial) {
      this(nanos, 0, serial);
    }

    Store(long nanos, long nanosPerOther, boolean serial) {
      this.nanos = nanos;
      this.nanosPerOther = nanosPerOther;
      this.serial = serial ? new ReentrantLock(true) : null;
    }

    private void roundTrip() {
      int others = inFlight.getAndIncrement();
      if (serial != null) {
        serial.lock();
      }
      try {
        long end = System.nanoTime() + nanos + others * nanosPerOther;
        while (System.nanoTime() < end) {
          LockSupport.parkNanos(end - System.nanoTime());
        }
      } finally {
        inFlight.decrementAndGet();
        if (serial != null) {
          serial.unlock();
        }
      }
    }

    @Override
    public String single(String request) {
      singles.incrementAndGet();
      roundTrip();
      return request;
    }

    @Override
    public List<BatchLockBackend.BatchResult<String>> batch(List<String> requests) {
      batches.incrementAndGet();
      roundTrip();
      return requests.stream().map(BatchLockBackend.BatchResult::of).toList();
    }

    @Override
    public String key(String request) {
      return request;
    }
  }

  private static Coalescer<String, String> coalescer(Store store, int min, int max) {
    return new Coalescer<>(
        store,
        64,
        min,
        max,
        false,
        (q, r) -> {},
        GuardListener.Verb.CLAIM,
        new GuardEvents(List.of()));
  }

  /** Runs {@link #CALLERS} threads of {@link #CALLS} calls each; every result is its request. */
  private static void drive(Coalescer<String, String> c) throws InterruptedException {
    drive(c, CALLERS, 0);
  }

  /**
   * Runs {@code callers} threads of {@link #CALLS} calls each, each pausing {@code pauseNanos}
   * after every call (as a caller does between its claim and its complete); every result is its
   * request.
   */
  private static void drive(Coalescer<String, String> c, int callers, long pauseNanos)
      throws InterruptedException {
    List<Thread> threads = new ArrayList<>();
    AtomicInteger wrong = new AtomicInteger();
    for (int t = 0; t < callers; t++) {
      int caller = t;
      Thread thread =
          new Thread(
              () -> {
                for (int i = 0; i < CALLS; i++) {
                  String key = caller + "-" + i;
                  if (!key.equals(c.submit(key))) {
                    wrong.incrementAndGet();
                  }
                  if (pauseNanos > 0) {
                    LockSupport.parkNanos(pauseNanos);
                  }
                }
              });
      threads.add(thread);
      thread.start();
    }
    for (Thread thread : threads) {
      thread.join();
    }
    assertThat(wrong).hasValue(0);
  }

  @Test
  void the_limit_rises_where_round_trips_overlap_so_callers_stop_waiting_for_each_other()
      throws InterruptedException {
    Store pipelined = new Store(5_000_000, false);
    Coalescer<String, String> c = coalescer(pipelined, 2, 16);
    drive(c);
    assertThat(c.limit()).isGreaterThan(2);
    // Most calls went alone once the limit had risen.
    assertThat(pipelined.singles.get()).isGreaterThan(CALLERS * CALLS / 2);
  }

  @Test
  void the_limit_stays_low_where_the_store_serves_one_round_trip_at_a_time_and_callers_batch()
      throws InterruptedException {
    Store serial = new Store(1_000_000, true);
    Coalescer<String, String> c = coalescer(serial, 1, 16);
    drive(c);
    // Round trips lengthen with every one more in flight: the limit stops well below the callers.
    assertThat(c.limit()).isBetween(1, 8);
    assertThat(serial.batches.get()).isPositive();
  }

  @Test
  void the_limit_rises_where_queued_callers_seldom_share_a_flush_though_round_trips_lengthen()
      throws InterruptedException {
    // Round trips lengthen with each one in flight (a server on few cores that shares its log
    // flushes between concurrent commits), and about as many callers are at the store as flushes
    // may be in flight. Round-trip times alone hold the limit near 5, where a queued caller mostly
    // waits out a round trip only to be sent alone: the wait buys no sharing. With the flushes'
    // sharing counted, the limit rises until callers stop waiting for each other.
    Store sharedFlush = new Store(2_000_000, 1_000_000, false);
    Coalescer<String, String> c = coalescer(sharedFlush, 1, 8);
    drive(c, 8, 3_000_000);
    assertThat(c.limit()).isGreaterThan(5);
    // Nine in ten calls went alone (by the round-trip rule alone about four in five did).
    assertThat(sharedFlush.singles.get()).isGreaterThan(8 * CALLS * 9 / 10);
  }

  @Test
  void a_fixed_limit_stays_fixed() throws InterruptedException {
    Store pipelined = new Store(1_000_000, false);
    Coalescer<String, String> c = coalescer(pipelined, 3, 3);
    drive(c);
    assertThat(c.limit()).isEqualTo(3);
  }
}
