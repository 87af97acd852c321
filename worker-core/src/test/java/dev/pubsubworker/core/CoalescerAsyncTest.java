package dev.pubsubworker.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Coalescer#submitAsync}: a lone send through an asynchronous single verb returns before the
 * store answers and holds its flush slot until it does; the answer, on the store's thread, passes
 * the slot to a queued caller (who then sends what queued, as one batch) and never sends on that
 * thread; a queued async request waits like {@code submit}; failures arrive in the stage.
 */
class CoalescerAsyncTest {

  private final ExecutorService callers = Executors.newCachedThreadPool();

  @AfterEach
  void stop() {
    callers.shutdownNow();
  }

  /** A store whose async single verb answers when the test says; batches answer at once. */
  private static class Store implements Coalescer.Verbs<String, String> {
    final Map<String, CompletableFuture<String>> pending = new ConcurrentHashMap<>();
    final Map<String, Thread> batchThreads = new ConcurrentHashMap<>();
    final AtomicInteger singles = new AtomicInteger();
    final AtomicInteger batches = new AtomicInteger();

    @Override
    public String single(String request) {
      singles.incrementAndGet();
      return request;
    }

    @Override
    public CompletionStage<String> singleAsync(String request) {
      CompletableFuture<String> f = new CompletableFuture<>();
      pending.put(request, f);
      return f;
    }

    @Override
    public List<BatchLockBackend.BatchResult<String>> batch(List<String> requests) {
      batches.incrementAndGet();
      requests.forEach(r -> batchThreads.put(r, Thread.currentThread()));
      return requests.stream().map(BatchLockBackend.BatchResult::of).toList();
    }

    @Override
    public String key(String request) {
      return request;
    }
  }

  private static Coalescer<String, String> coalescer(Store store) {
    return new Coalescer<>(
        store,
        64,
        1,
        1,
        false,
        (q, r) -> {},
        GuardListener.Verb.COMPLETE,
        new GuardEvents(List.of()));
  }

  @Test
  void a_lone_send_returns_before_the_answer_and_completes_with_it() throws Exception {
    Store store = new Store();
    Coalescer<String, String> c = coalescer(store);
    CompletableFuture<String> stage = c.submitAsync("a").toCompletableFuture();
    assertThat(stage).isNotDone();
    store.pending.get("a").complete("answer-a");
    assertThat(stage.get(5, TimeUnit.SECONDS)).isEqualTo("answer-a");
    // The slot is free again: the next lone send goes out at once, asynchronously.
    CompletableFuture<String> next = c.submitAsync("b").toCompletableFuture();
    assertThat(store.pending).containsKey("b");
    store.pending.get("b").complete("b");
    assertThat(next.get(5, TimeUnit.SECONDS)).isEqualTo("b");
  }

  @Test
  void the_answer_hands_the_slot_to_queued_callers_who_send_one_batch() throws Exception {
    Store store = new Store();
    Coalescer<String, String> c = coalescer(store);
    CompletableFuture<String> lead = c.submitAsync("lead").toCompletableFuture();
    // The only slot is taken: these queue (and wait, as submit does).
    Future<String> q1 = callers.submit(() -> c.submit("q1"));
    Future<String> q2 =
        callers.submit(() -> c.submitAsync("q2").toCompletableFuture().get(30, TimeUnit.SECONDS));
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                Thread.getAllStackTraces().keySet().stream()
                        .filter(t -> LockSupport.getBlocker(t) == c)
                        .count()
                    == 2);
    Thread answering =
        new Thread(() -> store.pending.get("lead").complete("lead"), "store-io-thread");
    answering.start();
    answering.join(30_000);
    assertThat(lead.get(5, TimeUnit.SECONDS)).isEqualTo("lead");
    assertThat(q1.get(30, TimeUnit.SECONDS)).isEqualTo("q1");
    assertThat(q2.get(30, TimeUnit.SECONDS)).isEqualTo("q2");
    assertThat(store.batches).hasValue(1);
    // Sent by a woken caller, never on the store's thread.
    assertThat(store.batchThreads.get("q1")).isNotSameAs(answering);
    assertThat(store.batchThreads.get("q1").getName()).isNotEqualTo("store-io-thread");
  }

  @Test
  void a_failed_answer_fails_the_stage_and_frees_the_slot() throws Exception {
    Store store = new Store();
    Coalescer<String, String> c = coalescer(store);
    CompletableFuture<String> stage = c.submitAsync("a").toCompletableFuture();
    store.pending.get("a").completeExceptionally(new LockBackendException("store down"));
    assertThatThrownBy(() -> stage.get(5, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .cause()
        .isInstanceOf(LockBackendException.class)
        .hasMessage("store down");
    CompletableFuture<String> next = c.submitAsync("b").toCompletableFuture();
    assertThat(store.pending).containsKey("b");
    store.pending.get("b").complete("b");
    assertThat(next.get(5, TimeUnit.SECONDS)).isEqualTo("b");
  }

  @Test
  void a_verb_that_throws_when_sending_fails_the_stage_and_frees_the_slot() throws Exception {
    Store store =
        new Store() {
          @Override
          public CompletionStage<String> singleAsync(String request) {
            if (request.equals("bad")) {
              throw new IllegalArgumentException("bad key");
            }
            return super.singleAsync(request);
          }
        };
    Coalescer<String, String> c = coalescer(store);
    CompletableFuture<String> stage = c.submitAsync("bad").toCompletableFuture();
    assertThatThrownBy(() -> stage.get(5, TimeUnit.SECONDS))
        .cause()
        .isInstanceOf(IllegalArgumentException.class);
    CompletableFuture<String> next = c.submitAsync("good").toCompletableFuture();
    store.pending.get("good").complete("good");
    assertThat(next.get(5, TimeUnit.SECONDS)).isEqualTo("good");
  }

  @Test
  void a_synchronous_single_verb_answers_on_the_caller_as_submit_does() throws Exception {
    Store store =
        new Store() {
          @Override
          public CompletionStage<String> singleAsync(String request) {
            return CompletableFuture.completedFuture(single(request));
          }
        };
    Coalescer<String, String> c = coalescer(store);
    CompletableFuture<String> stage = c.submitAsync("x").toCompletableFuture();
    assertThat(stage).isCompletedWithValue("x");
    assertThat(store.singles).hasValue(1);
  }
}
