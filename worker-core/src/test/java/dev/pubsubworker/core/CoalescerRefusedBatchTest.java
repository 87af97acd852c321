package dev.pubsubworker.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A batch that fails as a whole: refused by the store ({@link StoreRefusedException}: it is up and
 * said no, perhaps because of one entry), each entry goes again alone on its own caller's thread,
 * so only the entry the store refuses on its own fails; failed for any other reason (unreachable, a
 * timeout), every entry fails at once, as before, so no caller waits out the trouble twice.
 *
 * <p>Each test holds the first caller's round trip open until eleven more callers are queued behind
 * it (the limit is one flush), so they share one batch, deterministically.
 */
class CoalescerRefusedBatchTest {

  private static final long ROUND_TRIP_NANOS = 5_000_000;
  private static final int QUEUED = 11;

  private final ExecutorService callers = Executors.newCachedThreadPool();

  @AfterEach
  void stop() {
    callers.shutdownNow();
  }

  /**
   * A fake store whose round trips take {@link #ROUND_TRIP_NANOS}, the first lone one held until
   * released. It refuses any request naming "refused" alone; a batch holding one fails as a whole
   * with {@code batchFailure}.
   */
  private static final class Store implements Coalescer.Verbs<String, String> {
    final LockBackendException batchFailure;
    final CountDownLatch gateEntered = new CountDownLatch(1);
    final CountDownLatch gate = new CountDownLatch(1);
    final AtomicInteger singles = new AtomicInteger();
    final AtomicInteger batches = new AtomicInteger();

    Store(LockBackendException batchFailure) {
      this.batchFailure = batchFailure;
    }

    @Override
    public String single(String request) {
      singles.incrementAndGet();
      if (request.equals("gate")) {
        gateEntered.countDown();
        try {
          gate.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      pause(ROUND_TRIP_NANOS);
      if (request.contains("refused")) {
        throw new StoreRefusedException("the store refused " + request);
      }
      return request;
    }

    @Override
    public List<BatchLockBackend.BatchResult<String>> batch(List<String> requests) {
      batches.incrementAndGet();
      pause(ROUND_TRIP_NANOS);
      if (requests.stream().anyMatch(r -> r.contains("refused"))) {
        throw batchFailure;
      }
      return requests.stream().map(BatchLockBackend.BatchResult::of).toList();
    }

    @Override
    public String key(String request) {
      return request;
    }

    private static void pause(long nanos) {
      long end = System.nanoTime() + nanos;
      while (System.nanoTime() < end) {
        LockSupport.parkNanos(end - System.nanoTime());
      }
    }
  }

  /** Makes a few lone calls, then queues {@link #QUEUED} callers behind a gate. */
  private List<Future<Object>> queueBehindGate(Coalescer<String, String> c, Store store)
      throws Exception {
    for (int i = 0; i < 5; i++) {
      assertThat(c.submit("warm-" + i)).isEqualTo("warm-" + i);
    }
    Future<Object> gate = callers.submit(() -> c.submit("gate"));
    assertThat(store.gateEntered.await(30, TimeUnit.SECONDS)).isTrue();
    List<Thread> queued = new ArrayList<>();
    List<Future<Object>> futures = new ArrayList<>();
    for (int i = 0; i < QUEUED; i++) {
      String request = i == 5 ? "refused-5" : "mate-" + i;
      futures.add(
          callers.submit(
              () -> {
                synchronized (queued) {
                  queued.add(Thread.currentThread());
                }
                try {
                  return c.submit(request);
                } catch (LockBackendException e) {
                  return e;
                }
              }));
    }
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              synchronized (queued) {
                return queued.size() == QUEUED
                    && queued.stream().allMatch(t -> LockSupport.getBlocker(t) == c);
              }
            });
    store.gate.countDown();
    assertThat(gate.get(30, TimeUnit.SECONDS)).isEqualTo("gate");
    return futures;
  }

  private static Coalescer<String, String> coalescer(Store store) {
    return new Coalescer<>(
        store, 64, 1, 1, false, (q, r) -> {}, GuardListener.Verb.CLAIM, new GuardEvents(List.of()));
  }

  @Test
  void a_refused_batch_fails_only_the_entry_the_store_refuses_alone() throws Exception {
    Store store = new Store(new StoreRefusedException("the store refused the statement"));
    Coalescer<String, String> c = coalescer(store);
    List<Future<Object>> futures = queueBehindGate(c, store);
    for (int i = 0; i < QUEUED; i++) {
      Object outcome = futures.get(i).get(30, TimeUnit.SECONDS);
      if (i == 5) {
        assertThat(outcome)
            .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.THROWABLE)
            .isInstanceOf(LockBackendException.class)
            .hasMessage("the store refused refused-5");
      } else {
        assertThat(outcome).isEqualTo("mate-" + i);
      }
    }
    assertThat(store.batches).hasValue(1);
    // 5 warm-up calls, the gate, then each of the batch's entries alone.
    assertThat(store.singles).hasValue(5 + 1 + QUEUED);
  }

  @Test
  void a_batch_failed_otherwise_fails_every_entry_at_once() throws Exception {
    Store store = new Store(new LockBackendException("the store refused the statement"));
    Coalescer<String, String> c = coalescer(store);
    List<Future<Object>> futures = queueBehindGate(c, store);
    for (Future<Object> f : futures) {
      assertThat(f.get(30, TimeUnit.SECONDS))
          .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.THROWABLE)
          .isInstanceOf(LockBackendException.class)
          .hasMessageContaining("the store refused the statement");
    }
    assertThat(store.batches).hasValue(1);
    assertThat(store.singles).hasValue(5 + 1);
  }
}
