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

    /** Completes {@code request}'s pending send with itself on a thread named store-io-thread. */
    void answerOnStoreThread(String request) throws InterruptedException {
      Thread answering =
          new Thread(() -> pending.get(request).complete(request), "store-io-thread");
      answering.start();
      answering.join(30_000);
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
  void the_answer_hands_the_slot_to_a_waiting_caller_who_sends_one_batch() throws Exception {
    Store store = new Store();
    Coalescer<String, String> c = coalescer(store);
    CompletableFuture<String> lead = c.submitAsync("lead").toCompletableFuture();
    // The only slot is taken: a waiting caller queues, and an async request queues without waiting.
    Future<String> q1 = callers.submit(() -> c.submit("q1"));
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                Thread.getAllStackTraces().keySet().stream()
                        .filter(t -> LockSupport.getBlocker(t) == c)
                        .count()
                    == 1);
    CompletableFuture<String> q2 = c.submitAsync("q2").toCompletableFuture();
    assertThat(q2).isNotDone();
    store.answerOnStoreThread("lead");
    assertThat(lead.get(5, TimeUnit.SECONDS)).isEqualTo("lead");
    assertThat(q1.get(30, TimeUnit.SECONDS)).isEqualTo("q1");
    assertThat(q2.get(30, TimeUnit.SECONDS)).isEqualTo("q2");
    assertThat(store.batches).hasValue(1);
    // Sent by the woken caller, never on the store's thread.
    assertThat(store.batchThreads.get("q2").getName())
        .isNotEqualTo("store-io-thread")
        .doesNotStartWith("pubsub-worker-group-commit");
  }

  @Test
  void a_batch_no_caller_waits_for_is_sent_by_the_flusher_thread() throws Exception {
    Store store = new Store();
    Coalescer<String, String> c = coalescer(store);
    CompletableFuture<String> lead = c.submitAsync("lead").toCompletableFuture();
    List<CompletableFuture<String>> queued = new java.util.ArrayList<>();
    for (int i = 0; i < 5; i++) {
      queued.add(c.submitAsync("q" + i).toCompletableFuture());
    }
    // Nobody waits: every call returned at once, nothing sent but the lead.
    assertThat(queued).allSatisfy(f -> assertThat(f).isNotDone());
    assertThat(store.batches).hasValue(0);
    store.answerOnStoreThread("lead");
    for (int i = 0; i < 5; i++) {
      assertThat(queued.get(i).get(30, TimeUnit.SECONDS)).isEqualTo("q" + i);
    }
    assertThat(store.batches).hasValue(1);
    assertThat(store.batchThreads.get("q0").getName())
        .isEqualTo("pubsub-worker-group-commit-complete");
    // The slot came back: the next lone send goes out at once.
    CompletableFuture<String> next = c.submitAsync("after").toCompletableFuture();
    await().atMost(Duration.ofSeconds(30)).until(() -> store.pending.containsKey("after"));
    store.pending.get("after").complete("after");
    assertThat(next.get(5, TimeUnit.SECONDS)).isEqualTo("after");
  }

  @Test
  void a_refused_batch_of_unwaited_entries_is_sent_alone_entry_by_entry() throws Exception {
    AtomicInteger refusedBatches = new AtomicInteger();
    Store store =
        new Store() {
          @Override
          public List<BatchLockBackend.BatchResult<String>> batch(List<String> requests) {
            refusedBatches.incrementAndGet();
            throw new StoreRefusedException("the store refused the statement");
          }
        };
    Coalescer<String, String> c = coalescer(store);
    CompletableFuture<String> lead = c.submitAsync("lead").toCompletableFuture();
    CompletableFuture<String> a = c.submitAsync("a").toCompletableFuture();
    CompletableFuture<String> b = c.submitAsync("b").toCompletableFuture();
    store.pending.get("lead").complete("lead");
    assertThat(a.get(30, TimeUnit.SECONDS)).isEqualTo("a");
    assertThat(b.get(30, TimeUnit.SECONDS)).isEqualTo("b");
    assertThat(refusedBatches).hasValue(1);
    assertThat(store.singles).hasValue(2);
    assertThat(lead).isCompletedWithValue("lead");
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
