package dev.pubsubworker.testkit.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pubsubworker.backend.memory.InMemoryLockBackend;
import dev.pubsubworker.core.BatchLockBackend;
import dev.pubsubworker.core.CallOptions;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.Completion;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.KeyInProgressException;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.core.LockResult;
import dev.pubsubworker.core.LockState;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link IdempotencyGuard#lockAsync}: the work runs on the caller, the call returns while DONE is
 * on its way, and the stage completes with what {@code lock} would have returned once the store
 * answers — on the store's thread. Everything before the end of the work is thrown as {@code lock}
 * throws it. With group commit on (the complete goes through the coalescer) and off.
 */
class GuardLockAsyncTest {

  /**
   * The in-memory store whose {@code completeAsync} is answered by the test: each call queues its
   * claim, and {@link #answer} applies the complete on a thread of its own.
   */
  private static final class AsyncStore implements BatchLockBackend {
    final InMemoryLockBackend store = new InMemoryLockBackend(Clock.systemUTC());
    final LinkedBlockingQueue<Runnable> answers = new LinkedBlockingQueue<>();
    volatile boolean failNext;
    final AtomicInteger syncCompletes = new AtomicInteger();

    @Override
    public ClaimResult claim(ClaimRequest request) {
      return store.claim(request);
    }

    @Override
    public boolean complete(Claim claim, Duration ttl) {
      syncCompletes.incrementAndGet();
      return store.complete(claim, ttl);
    }

    @Override
    public CompletionStage<Boolean> completeAsync(Claim claim, Duration ttl) {
      CompletableFuture<Boolean> f = new CompletableFuture<>();
      boolean fail = failNext;
      failNext = false;
      answers.add(
          () -> {
            if (fail) {
              f.completeExceptionally(new LockBackendException("store unreachable"));
            } else {
              f.complete(store.complete(claim, ttl));
            }
          });
      return f;
    }

    /** Answers the oldest complete in flight, on a new thread named {@code store-io}. */
    Thread answer() throws InterruptedException {
      Runnable next = answers.poll(30, TimeUnit.SECONDS);
      assertThat(next).as("a complete in flight").isNotNull();
      Thread io = new Thread(next, "store-io");
      io.start();
      io.join(30_000);
      return io;
    }

    @Override
    public void release(Claim claim) {
      store.release(claim);
    }

    @Override
    public boolean extend(Claim claim, Duration lease) {
      return store.extend(claim, lease);
    }

    @Override
    public List<BatchResult<ClaimResult>> claimAll(List<ClaimRequest> requests) {
      return store.claimAll(requests);
    }

    @Override
    public List<BatchResult<Boolean>> completeAll(List<CompleteRequest> requests) {
      return store.completeAll(requests);
    }
  }

  private static IdempotencyGuard guard(AsyncStore store, boolean batching) {
    return IdempotencyGuard.newBuilder(store).batching(batching).claimRetries(0).build();
  }

  @ParameterizedTest(name = "batching {0}")
  @ValueSource(booleans = {true, false})
  void returns_while_done_is_on_its_way_and_completes_on_the_store_thread(boolean batching)
      throws Exception {
    AsyncStore store = new AsyncStore();
    try (IdempotencyGuard g = guard(store, batching)) {
      AtomicInteger runs = new AtomicInteger();
      Thread caller = Thread.currentThread();
      CompletableFuture<LockResult<Integer>> stage =
          g.lockAsync(
                  "k",
                  CallOptions.defaults(),
                  ctx -> {
                    assertThat(Thread.currentThread()).isSameAs(caller);
                    return runs.incrementAndGet();
                  })
              .toCompletableFuture();
      assertThat(runs).hasValue(1);
      assertThat(stage).isNotDone();
      assertThat(store.store.inspect("k").orElseThrow().state()).isEqualTo(LockState.CLAIMED);
      // A redelivery meanwhile finds the key held, as while the work runs.
      assertThatThrownBy(() -> g.lock("k", ctx -> runs.incrementAndGet()))
          .isInstanceOf(KeyInProgressException.class);

      CompletableFuture<Thread> answeredOn = stage.thenApply(r -> Thread.currentThread());
      Thread io = store.answer();
      LockResult<Integer> result = stage.get(30, TimeUnit.SECONDS);
      assertThat(result)
          .isInstanceOfSatisfying(
              LockResult.Executed.class,
              e -> assertThat(e.completion()).isEqualTo(Completion.COMPLETED));
      assertThat(answeredOn.get(30, TimeUnit.SECONDS)).isSameAs(io);
      assertThat(store.store.inspect("k").orElseThrow().state()).isEqualTo(LockState.DONE);
      assertThat(store.syncCompletes).hasValue(0);

      // A duplicate: a stage already complete, the work not run.
      CompletableFuture<LockResult<Integer>> dup =
          g.lockAsync("k", CallOptions.defaults(), ctx -> runs.incrementAndGet())
              .toCompletableFuture();
      assertThat(dup).isDone();
      assertThat(dup.get()).isInstanceOf(LockResult.Duplicate.class);
      assertThat(runs).hasValue(1);
    }
  }

  @ParameterizedTest(name = "batching {0}")
  @ValueSource(booleans = {true, false})
  void a_complete_that_fails_is_complete_failed_not_an_exception(boolean batching)
      throws Exception {
    AsyncStore store = new AsyncStore();
    try (IdempotencyGuard g = guard(store, batching)) {
      store.failNext = true;
      CompletableFuture<LockResult<String>> stage =
          g.lockAsync("k", CallOptions.defaults(), ctx -> "ran").toCompletableFuture();
      store.answer();
      assertThat(stage.get(30, TimeUnit.SECONDS))
          .isInstanceOfSatisfying(
              LockResult.Executed.class,
              e -> {
                assertThat(e.completion()).isEqualTo(Completion.COMPLETE_FAILED);
                assertThat(e.value()).isEqualTo("ran");
              });
      assertThat(store.store.inspect("k").orElseThrow().state()).isEqualTo(LockState.CLAIMED);
    }
  }

  @ParameterizedTest(name = "batching {0}")
  @ValueSource(booleans = {true, false})
  void a_complete_of_a_fenced_out_claim_is_fenced_out(boolean batching) throws Exception {
    AsyncStore store = new AsyncStore();
    try (IdempotencyGuard g = guard(store, batching)) {
      CompletableFuture<LockResult<String>> stage =
          g.lockAsync(
                  "k",
                  CallOptions.defaults(),
                  ctx -> {
                    // Another claim takes the key over before DONE is written.
                    store.store.forget("k");
                    return "ran";
                  })
              .toCompletableFuture();
      store.answer();
      assertThat(stage.get(30, TimeUnit.SECONDS))
          .isInstanceOfSatisfying(
              LockResult.Executed.class,
              e -> assertThat(e.completion()).isEqualTo(Completion.FENCED_OUT));
    }
  }

  @ParameterizedTest(name = "batching {0}")
  @ValueSource(booleans = {true, false})
  void the_work_s_failure_is_thrown_from_the_call_and_the_claim_released(boolean batching) {
    AsyncStore store = new AsyncStore();
    try (IdempotencyGuard g = guard(store, batching)) {
      assertThatThrownBy(
              () ->
                  g.lockAsync(
                      "k",
                      CallOptions.defaults(),
                      ctx -> {
                        throw new IllegalStateException("handler failed");
                      }))
          .isInstanceOf(IllegalStateException.class)
          .hasMessage("handler failed");
      assertThat(store.answers).isEmpty();
      // Released: reclaimable at once.
      assertThat(g.lock("k", ctx -> "again"))
          .isInstanceOfSatisfying(
              LockResult.Executed.class, e -> assertThat(e.value()).isEqualTo("again"));
    }
  }
}
