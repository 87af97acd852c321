package dev.pubsubworker.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;

/**
 * The coalescer's adaptive limit of flushes in flight: it rises on a store that serves overlapping
 * round trips side by side (their time does not grow with their number, or grows less than serving
 * them in turn would take), and stays low, batching the callers, on a store that serves one round
 * trip at a time, even where few callers queue at once. Each test drives callers through a fake
 * store whose round trips take a time set by what is in flight and what they hold; nothing asserts
 * a duration.
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
    final long nanosPerEntry;
    final ReentrantLock serial;
    final AtomicInteger inFlight = new AtomicInteger();
    final AtomicInteger singles = new AtomicInteger();
    final AtomicInteger batches = new AtomicInteger();

    Store(long nanos, boolean serial) {
      this(nanos, 0, 0, serial);
    }

    Store(long nanos, long nanosPerOther, long nanosPerEntry, boolean serial) {
      this.nanos = nanos;
      this.nanosPerOther = nanosPerOther;
      this.nanosPerEntry = nanosPerEntry;
      this.serial = serial ? new ReentrantLock(true) : null;
    }

    private void roundTrip(int entries) {
      int others = inFlight.getAndIncrement();
      if (serial != null) {
        serial.lock();
      }
      try {
        long end = System.nanoTime() + nanos + others * nanosPerOther + entries * nanosPerEntry;
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
      roundTrip(1);
      return request;
    }

    @Override
    public List<BatchLockBackend.BatchResult<String>> batch(List<String> requests) {
      batches.incrementAndGet();
      roundTrip(requests.size());
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
    Store pipelined = new Store(1_000_000, false);
    Coalescer<String, String> c = coalescer(pipelined, 2, 16);
    // The limit rises a step per period at most, each limit measured over two periods first.
    for (int run = 0; run < 5; run++) {
      drive(c);
    }
    int before = pipelined.singles.get();
    drive(c);
    assertThat(c.limit()).isGreaterThan(2);
    // Once the limit had risen, most calls went alone.
    assertThat(pipelined.singles.get() - before).isGreaterThan(CALLERS * CALLS / 2);
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
  void the_limit_rises_where_more_round_trips_in_flight_get_more_through_though_each_lengthens()
      throws InterruptedException {
    // Each round trip costs the store per entry (a batch saves it nothing) and lengthens with each
    // other one in flight, less than it would take to serve them one after another (a server on
    // few cores that shares its log flushes between concurrent commits). By round-trip times alone
    // the store looks busy at 5 or more in flight; the throughput measured at each limit shows
    // that more in flight gets more through, so the limit rises until callers stop waiting for each
    // other.
    Store overlapping = new Store(0, 500_000, 1_000_000, false);
    Coalescer<String, String> c = coalescer(overlapping, 1, 8);
    drive(c, 8, 3_000_000);
    assertThat(c.limit()).isGreaterThan(3);
    assertThat(overlapping.singles.get()).isGreaterThan(8 * CALLS * 3 / 4);
  }

  @Test
  void the_limit_stays_where_more_gets_through_though_queued_callers_seldom_share_a_flush()
      throws InterruptedException {
    // A store that serves one round trip at a time, whatever it holds (its CPU or its log flush is
    // the bottleneck), and callers that spend most of their time elsewhere: at any limit few of
    // them are queued when a flush ends, so flushes hold 1 to 2 entries and the sharing rule alone
    // would raise the limit to its maximum. There every round trip waits for the others before it
    // and fewer callers get through than at a limit of 1 or 2, where they share the round trip.
    Store serial = new Store(1_000_000, true);
    Coalescer<String, String> c = coalescer(serial, 1, 8);
    int[] seen = driveAndSample(c, 12, 6_000_000);
    int samples = 0;
    int low = 0;
    for (int l = 1; l < seen.length; l++) {
      samples += seen[l];
      low += l <= 4 ? seen[l] : 0;
    }
    // By the round-trip and sharing rules alone, it spends most of the run at 8.
    assertThat(low)
        .as("samples at a limit of 4 or less, of %d: %s", samples, Arrays.toString(seen))
        .isGreaterThan(samples * 3 / 4);
    assertThat(c.limit()).isLessThan(8);
  }

  /**
   * As {@link #drive(Coalescer, int, long)}, and samples the limit every millisecond meanwhile:
   * returns how many samples saw each limit (index 0 unused).
   */
  private static int[] driveAndSample(Coalescer<String, String> c, int callers, long pauseNanos)
      throws InterruptedException {
    int[] seen = new int[17];
    AtomicBoolean done = new AtomicBoolean();
    Thread sampler =
        new Thread(
            () -> {
              while (!done.get()) {
                seen[c.limit()]++;
                LockSupport.parkNanos(1_000_000);
              }
            });
    sampler.start();
    try {
      drive(c, callers, pauseNanos);
    } finally {
      done.set(true);
      sampler.join();
    }
    return seen;
  }

  @Test
  void a_fixed_limit_stays_fixed() throws InterruptedException {
    Store pipelined = new Store(1_000_000, false);
    Coalescer<String, String> c = coalescer(pipelined, 3, 3);
    drive(c);
    assertThat(c.limit()).isEqualTo(3);
  }
}
