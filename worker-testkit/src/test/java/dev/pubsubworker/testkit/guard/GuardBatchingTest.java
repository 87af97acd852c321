package dev.pubsubworker.testkit.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.pubsubworker.backend.memory.InMemoryLockBackend;
import dev.pubsubworker.core.Completion;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.KeyInProgressException;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.core.LockRecord;
import dev.pubsubworker.core.LockResult;
import dev.pubsubworker.core.LockState;
import dev.pubsubworker.core.StoreRefusedException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The guard's group commit on an instrumented batch backend: a lone caller uses the single verb,
 * concurrent callers share round trips, a failed round trip fails every entry as the single verb
 * would while a batch the store refused is sent again entry by entry, a batch never repeats a key,
 * and an interrupted waiter loses nothing. Callers are held in place with gates in the backend and
 * observed parked in the guard; nothing sleeps or times.
 */
class GuardBatchingTest {

  private GatedBatchBackend backend;
  private RecordingListener listener;
  private IdempotencyGuard guard;
  private final List<Thread> threads = new ArrayList<>();
  private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

  @BeforeEach
  void setUp() {
    backend = new GatedBatchBackend(8);
    listener = new RecordingListener();
    guard = newGuard(0);
  }

  @AfterEach
  void tearDown() throws InterruptedException {
    backend.singleGate.countDown();
    backend.batchGate.countDown();
    backend.singleClaimGates.values().forEach(CountDownLatch::countDown);
    for (Thread t : threads) {
      t.join(TimeUnit.SECONDS.toMillis(30));
    }
    guard.close();
  }

  private IdempotencyGuard newGuard(int claimRetries) {
    return IdempotencyGuard.newBuilder(backend)
        .lease(Duration.ofSeconds(30))
        .heartbeat(false)
        .claimRetries(claimRetries)
        .claimRetryBackoff(Duration.ZERO)
        .listener(listener)
        .build();
  }

  /** What one caller's thread ended with: its result or its exception, and its interrupt flag. */
  private record Outcome(Object value, boolean interrupted) {}

  /** Starts {@code lock(key)} on a new thread; the work counts its runs. */
  private CompletableFuture<Outcome> caller(String key, Thread[] threadOut) {
    CompletableFuture<Outcome> done = new CompletableFuture<>();
    Thread t =
        new Thread(
            () -> {
              Object value;
              try {
                value =
                    guard.lock(
                        key,
                        ctx ->
                            runs.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet());
              } catch (RuntimeException e) {
                value = e;
              }
              done.complete(new Outcome(value, Thread.currentThread().isInterrupted()));
            },
            "caller-" + key);
    threads.add(t);
    if (threadOut != null) {
      threadOut[0] = t;
    }
    t.start();
    return done;
  }

  /** Starts a caller and waits until it is parked in the guard, queued behind the flush. */
  private CompletableFuture<Outcome> queuedCaller(String key, Thread[] threadOut) {
    Thread[] t = threadOut != null ? threadOut : new Thread[1];
    CompletableFuture<Outcome> f = caller(key, t);
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> {
              Object blocker = LockSupport.getBlocker(t[0]);
              return blocker != null && blocker.getClass().getSimpleName().equals("Coalescer");
            });
    return f;
  }

  /** Starts a caller on {@code key} whose single claim is held open in the store. */
  private CompletableFuture<Outcome> heldLeader(String key) throws InterruptedException {
    backend.holdSingleClaimOf = key;
    CompletableFuture<Outcome> f = caller(key, null);
    assertThat(backend.singleEntered.await(20, TimeUnit.SECONDS)).isTrue();
    return f;
  }

  private static Object value(CompletableFuture<Outcome> f) throws Exception {
    return f.get(20, TimeUnit.SECONDS).value();
  }

  @Test
  @DisplayName("batching is on by default for a batch backend, off for the in-memory one")
  void batching_defaults() {
    assertThat(guard.batching()).isTrue();
    try (IdempotencyGuard off = IdempotencyGuard.newBuilder(backend).batching(false).build()) {
      assertThat(off.batching()).isFalse();
    }
    InMemoryLockBackend memory = new InMemoryLockBackend();
    try (IdempotencyGuard plain = IdempotencyGuard.newBuilder(memory).build();
        IdempotencyGuard forced = IdempotencyGuard.newBuilder(memory).batching(true).build()) {
      assertThat(plain.batching()).isFalse();
      assertThat(forced.batching()).isTrue();
    }
  }

  @Test
  @DisplayName("a lone caller goes through the single verbs: no batch, no wait")
  void lone_caller_uses_the_single_verbs() {
    for (int i = 0; i < 5; i++) {
      LockResult<Integer> r = guard.lock("k" + i, ctx -> 1);
      assertThat(r).isEqualTo(new LockResult.Executed<>(1, 1, Completion.COMPLETED));
    }
    assertThat(guard.lock("k0", ctx -> 1)).isInstanceOf(LockResult.Duplicate.class);
    assertThat(backend.singleClaims).hasValue(6);
    assertThat(backend.singleCompletes).hasValue(5);
    assertThat(backend.claimBatches).isEmpty();
    assertThat(backend.completeBatches).isEmpty();
    assertThat(listener.events).noneMatch(e -> e.startsWith("batch:"));
  }

  @Test
  @DisplayName("callers arriving during a flush share the next round trip")
  void concurrent_callers_share_round_trips() throws Exception {
    CompletableFuture<Outcome> leader = heldLeader("lead");
    List<CompletableFuture<Outcome>> followers = new ArrayList<>();
    for (int i = 1; i <= 5; i++) {
      followers.add(queuedCaller("k" + i, null));
    }
    backend.singleGate.countDown();

    assertThat(value(leader)).isEqualTo(new LockResult.Executed<>(1, 1, Completion.COMPLETED));
    for (CompletableFuture<Outcome> f : followers) {
      assertThat(value(f)).isEqualTo(new LockResult.Executed<>(1, 1, Completion.COMPLETED));
    }
    // Six claims in two round trips: the leader's alone, the five queued ones in one batch.
    assertThat(backend.singleClaims).hasValue(1);
    assertThat(backend.claimBatches).containsExactly(List.of("k1", "k2", "k3", "k4", "k5"));
    assertThat(listener.events).contains("batch:CLAIM:5:ok");
    assertThat(listener.events.stream().filter(e -> e.equals("call:CLAIM:ok"))).hasSize(6);
    for (String k : List.of("lead", "k1", "k2", "k3", "k4", "k5")) {
      assertThat(backend.store.inspect(k).orElseThrow().state()).isEqualTo(LockState.DONE);
      assertThat(runs.get(k)).hasValue(1);
    }
  }

  /** Replaces the backend and guard with ones that keep up to {@code n} flushes in flight. */
  private void useConcurrentBatches(int n) {
    guard.close();
    backend = new GatedBatchBackend(8, n);
    guard = newGuard(0);
  }

  /** Starts callers whose single claims are each held open in the store, and waits for them all. */
  private Map<String, CompletableFuture<Outcome>> heldSingles(String... keys)
      throws InterruptedException {
    Map<String, CompletableFuture<Outcome>> held = new java.util.LinkedHashMap<>();
    for (String k : keys) {
      backend.singleClaimGates.put(k, new CountDownLatch(1));
    }
    for (String k : keys) {
      held.put(k, caller(k, null));
    }
    // Every one of them is inside the store at once: none waited for another.
    assertThat(backend.gatedSinglesEntered.tryAcquire(keys.length, 20, TimeUnit.SECONDS)).isTrue();
    return held;
  }

  @Test
  @DisplayName("up to N callers go out at once as single verbs; later ones share the next flush")
  void n_callers_in_flight_at_once_the_rest_batch() throws Exception {
    useConcurrentBatches(3);
    Map<String, CompletableFuture<Outcome>> held = heldSingles("s1", "s2", "s3");
    List<CompletableFuture<Outcome>> queued = new ArrayList<>();
    for (int i = 1; i <= 4; i++) {
      queued.add(queuedCaller("q" + i, null));
    }
    assertThat(backend.singleClaims).hasValue(3);
    assertThat(backend.claimBatches).isEmpty();

    held.values().forEach(f -> assertThat(f).isNotDone());
    backend.singleClaimGates.values().forEach(CountDownLatch::countDown);
    for (CompletableFuture<Outcome> f : held.values()) {
      assertThat(value(f)).isEqualTo(new LockResult.Executed<>(1, 1, Completion.COMPLETED));
    }
    for (CompletableFuture<Outcome> f : queued) {
      assertThat(value(f)).isEqualTo(new LockResult.Executed<>(1, 1, Completion.COMPLETED));
    }
    // The first flush to end took the whole queue as one batch.
    assertThat(backend.singleClaims).hasValue(3);
    assertThat(backend.claimBatches).containsExactly(List.of("q1", "q2", "q3", "q4"));
    assertThat(listener.events).contains("batch:CLAIM:4:ok");
    for (String k : List.of("s1", "s2", "s3", "q1", "q2", "q3", "q4")) {
      assertThat(backend.store.inspect(k).orElseThrow().state()).isEqualTo(LockState.DONE);
      assertThat(runs.get(k)).hasValue(1);
    }
  }

  @Test
  @DisplayName("the queue goes out when any one flush ends, while the others are still in flight")
  void queue_goes_with_the_first_free_flush() throws Exception {
    useConcurrentBatches(2);
    Map<String, CompletableFuture<Outcome>> held = heldSingles("s1", "s2");
    List<CompletableFuture<Outcome>> queued = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      queued.add(queuedCaller("q" + i, null));
    }
    backend.singleClaimGates.get("s1").countDown();

    assertThat(value(held.get("s1"))).isInstanceOf(LockResult.Executed.class);
    for (CompletableFuture<Outcome> f : queued) {
      assertThat(value(f)).isEqualTo(new LockResult.Executed<>(1, 1, Completion.COMPLETED));
    }
    assertThat(held.get("s2")).isNotDone();
    assertThat(backend.claimBatches).containsExactly(List.of("q1", "q2", "q3"));

    backend.singleClaimGates.get("s2").countDown();
    assertThat(value(held.get("s2"))).isInstanceOf(LockResult.Executed.class);
    // Both slots free again: a lone caller goes straight through the single verb.
    assertThat(guard.lock("after", ctx -> 1)).isInstanceOf(LockResult.Executed.class);
    assertThat(backend.singleClaims).hasValue(3);
    assertThat(backend.claimBatches).hasSize(1);
  }

  @Test
  @DisplayName("a round trip that fails fails every entry as the single verb would; nothing runs")
  void failed_round_trip_fails_every_entry() throws Exception {
    CompletableFuture<Outcome> leader = heldLeader("lead");
    List<CompletableFuture<Outcome>> followers = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      followers.add(queuedCaller("k" + i, null));
    }
    backend.failNextClaimBatch.set(new LockBackendException("store down"));
    backend.singleGate.countDown();

    assertThat(value(leader)).isInstanceOf(LockResult.Executed.class);
    List<Object> failures = new ArrayList<>();
    for (CompletableFuture<Outcome> f : followers) {
      Object v = value(f);
      assertThat(v).isInstanceOf(LockBackendException.class);
      assertThat(((Exception) v).getMessage()).contains("store down");
      failures.add(v);
    }
    // One exception instance per caller: callers on different threads never share one.
    assertThat(new HashSet<>(failures)).hasSize(3);
    for (String k : List.of("k1", "k2", "k3")) {
      assertThat(runs.get(k)).isNull();
      assertThat(backend.store.inspect(k)).isEmpty();
    }
    assertThat(listener.events).contains("batch:CLAIM:3:failed");
    assertThat(listener.events.stream().filter(e -> e.equals("call:CLAIM:failed"))).hasSize(3);
  }

  @Test
  @DisplayName("a failed batch entry is retried with the same token, through the coalescer")
  void failed_round_trip_is_retried_per_entry() throws Exception {
    guard.close();
    guard = newGuard(2);
    CompletableFuture<Outcome> leader = heldLeader("lead");
    List<CompletableFuture<Outcome>> followers = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      followers.add(queuedCaller("k" + i, null));
    }
    backend.failNextClaimBatch.set(new LockBackendException("store down"));
    backend.singleGate.countDown();

    assertThat(value(leader)).isInstanceOf(LockResult.Executed.class);
    for (CompletableFuture<Outcome> f : followers) {
      assertThat(value(f)).isEqualTo(new LockResult.Executed<>(1, 1, Completion.COMPLETED));
    }
    assertThat(listener.events).containsSubsequence("call:CLAIM:failed", "call:CLAIM:ok");
  }

  @Test
  @DisplayName(
      "a batch the store refuses is sent again entry by entry, each on its caller's thread: every"
          + " entry gets its single verb's own answer")
  void a_refused_batch_is_sent_again_entry_by_entry() throws Exception {
    CompletableFuture<Outcome> leader = heldLeader("lead");
    List<CompletableFuture<Outcome>> followers = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      followers.add(queuedCaller("k" + i, null));
    }
    backend.failNextClaimBatch.set(new StoreRefusedException("refused: one row breaks a rule"));
    backend.singleGate.countDown();

    assertThat(value(leader)).isInstanceOf(LockResult.Executed.class);
    for (CompletableFuture<Outcome> f : followers) {
      assertThat(value(f)).isEqualTo(new LockResult.Executed<>(1, 1, Completion.COMPLETED));
    }
    assertThat(backend.claimBatches).containsExactly(List.of("k1", "k2", "k3"));
    // The leader's single claim, then each entry of the refused batch alone.
    assertThat(backend.singleClaims).hasValue(1 + 3);
    for (String k : List.of("k1", "k2", "k3")) {
      assertThat(runs.get(k)).hasValue(1);
      assertThat(backend.store.inspect(k).orElseThrow().state()).isEqualTo(LockState.DONE);
    }
    assertThat(listener.events).contains("batch:CLAIM:3:failed");
    assertThat(listener.events.stream().filter(e -> e.equals("call:CLAIM:failed"))).isEmpty();
  }

  @Test
  @DisplayName("a batch never holds two entries for one key; the later ones wait for the next")
  void duplicate_keys_are_never_in_one_batch() throws Exception {
    CompletableFuture<Outcome> leader = heldLeader("lead");
    List<CompletableFuture<Outcome>> bs = new ArrayList<>();
    bs.add(queuedCaller("b", null));
    bs.add(queuedCaller("b", null));
    CompletableFuture<Outcome> c = queuedCaller("c", null);
    bs.add(queuedCaller("b", null));
    backend.singleGate.countDown();

    assertThat(value(leader)).isInstanceOf(LockResult.Executed.class);
    assertThat(value(c)).isInstanceOf(LockResult.Executed.class);
    int executed = 0;
    for (CompletableFuture<Outcome> f : bs) {
      Object v = value(f);
      if (v instanceof LockResult.Executed<?>) {
        executed++;
      } else {
        assertThat(v).isInstanceOfAny(LockResult.Duplicate.class, KeyInProgressException.class);
      }
    }
    assertThat(executed).isEqualTo(1);
    assertThat(runs.get("b")).hasValue(1);
    assertThat(backend.claimBatches).first().isEqualTo(List.of("b", "c"));
    for (List<String> batch : backend.claimBatches) {
      assertThat(batch).doesNotHaveDuplicates();
    }
    for (List<String> batch : backend.completeBatches) {
      assertThat(batch).doesNotHaveDuplicates();
    }
  }

  @Test
  @DisplayName("a caller interrupted while queued leaves the queue: nothing sent, interrupt kept")
  void interrupted_while_queued_sends_nothing() throws Exception {
    CompletableFuture<Outcome> leader = heldLeader("lead");
    Thread[] t = new Thread[1];
    CompletableFuture<Outcome> queued = queuedCaller("q", t);
    t[0].interrupt();
    Outcome out = queued.get(20, TimeUnit.SECONDS);
    assertThat(out.value()).isInstanceOf(LockBackendException.class);
    assertThat(out.interrupted()).isTrue();

    backend.singleGate.countDown();
    assertThat(value(leader)).isInstanceOf(LockResult.Executed.class);
    assertThat(backend.claimBatches).isEmpty();
    assertThat(backend.singleClaims).hasValue(1);
    assertThat(backend.store.inspect("q")).isEmpty();
    assertThat(runs.get("q")).isNull();
  }

  @Test
  @DisplayName("a claim won for a caller interrupted while it was in flight is released, not lost")
  void interrupted_in_flight_releases_a_won_claim() throws Exception {
    CompletableFuture<Outcome> leader = heldLeader("lead");
    CompletableFuture<Outcome> first = queuedCaller("f1", null);
    Thread[] t = new Thread[1];
    CompletableFuture<Outcome> second = queuedCaller("f2", t);
    backend.holdNextClaimBatch = true;
    backend.singleGate.countDown();
    // f1 leads the batch [f1, f2]; the store has written both claims and holds the response.
    assertThat(backend.batchEntered.await(20, TimeUnit.SECONDS)).isTrue();
    t[0].interrupt();
    Outcome out = second.get(20, TimeUnit.SECONDS);
    assertThat(out.value()).isInstanceOf(LockBackendException.class);
    assertThat(out.interrupted()).isTrue();

    backend.batchGate.countDown();
    assertThat(value(leader)).isInstanceOf(LockResult.Executed.class);
    assertThat(value(first)).isEqualTo(new LockResult.Executed<>(1, 1, Completion.COMPLETED));
    assertThat(backend.claimBatches).containsExactly(List.of("f1", "f2"));
    await().atMost(Duration.ofSeconds(20)).until(() -> backend.releases.get() == 1);
    LockRecord f2 = backend.store.inspect("f2").orElseThrow();
    assertThat(f2.state()).isEqualTo(LockState.CLAIMED);
    assertThat(f2.fence()).isEqualTo(2);
    assertThat(runs.get("f2")).isNull();
    assertThat(listener.events).contains("released:f2:1:failure");
    // Reclaimable at once: the next delivery runs the work.
    assertThat(guard.lock("f2", ctx -> ctx.fencingToken()))
        .isEqualTo(new LockResult.Executed<>(3L, 3, Completion.COMPLETED));
  }

  @Test
  @DisplayName("under contention through the batched path, every key's work runs exactly once")
  void contended_batched_callers_run_each_key_once() throws Exception {
    InMemoryLockBackend memory = new InMemoryLockBackend();
    Map<String, AtomicInteger> counts = new ConcurrentHashMap<>();
    try (IdempotencyGuard batched =
        IdempotencyGuard.newBuilder(memory).batching(true).heartbeat(false).build()) {
      java.util.concurrent.ExecutorService pool =
          java.util.concurrent.Executors.newFixedThreadPool(8);
      List<CompletableFuture<Void>> all = new ArrayList<>();
      for (int thread = 0; thread < 8; thread++) {
        int seed = thread;
        all.add(
            CompletableFuture.runAsync(
                () -> {
                  for (int i = 0; i < 300; i++) {
                    String key = "key-" + ((i * 7 + seed * 13) % 50);
                    try {
                      batched.lock(
                          key,
                          ctx ->
                              counts
                                  .computeIfAbsent(key, k -> new AtomicInteger())
                                  .incrementAndGet());
                    } catch (KeyInProgressException expected) {
                      // another caller holds it right now
                    }
                  }
                },
                pool));
      }
      try {
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
      } finally {
        pool.shutdownNow();
      }
    }
    assertThat(counts).hasSize(50);
    assertThat(counts.values()).allSatisfy(n -> assertThat(n).hasValue(1));
    for (int k = 0; k < 50; k++) {
      assertThat(memory.inspect("key-" + k).orElseThrow().state()).isEqualTo(LockState.DONE);
    }
  }
}
