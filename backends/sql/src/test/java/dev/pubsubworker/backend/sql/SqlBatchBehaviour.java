package dev.pubsubworker.backend.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariDataSource;
import dev.pubsubworker.core.BatchLockBackend;
import dev.pubsubworker.core.BatchLockBackend.BatchResult;
import dev.pubsubworker.core.BatchLockBackend.CompleteRequest;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.GuardListener;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.core.LockResult;
import dev.pubsubworker.core.LockState;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * What the SQL backend's batch verbs ({@code claimAll}, {@code completeAll}) promise beyond the
 * shared suites (which {@code *Batched*Test} run through them): per-entry independence, checks
 * before any I/O, the statements and commits per batch, concurrent overlapping batches, a failed
 * round trip failing the whole batch with nothing stored, and, through the guard's group commit, a
 * batch the database refuses for one key failing that key only. A dialect's test extends this
 * class.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class SqlBatchBehaviour {

  static final Duration LEASE = Duration.ofSeconds(30);
  static final Duration TTL = Duration.ofHours(1);

  private final AtomicInteger keys = new AtomicInteger();
  private final String run = UUID.randomUUID().toString().substring(0, 8);
  SqlFixture fixture;
  SqlLockBackend backend;

  /** The fixture (table, clock) of this class. */
  abstract SqlFixture createFixture();

  /** Statements of a claimAll of {@code n} absent keys, as documented in the module README. */
  abstract int claimStatements(int n);

  /** Whether the dialect's claimAll runs in an explicit transaction (one commit). */
  abstract boolean claimInTransaction();

  @BeforeAll
  void open() {
    fixture = createFixture();
    backend = fixture.backend();
  }

  @AfterAll
  void close() {
    if (fixture != null) {
      fixture.close();
    }
  }

  String newKey(String name) {
    return "batch-" + run + "-" + name + "-" + keys.incrementAndGet();
  }

  static String token() {
    return UUID.randomUUID().toString();
  }

  static ClaimRequest request(String key) {
    return new ClaimRequest(key, LEASE, TTL, token(), null);
  }

  static Claim won(BatchResult<ClaimResult> r) {
    assertThat(r.isFailure()).as("%s", r).isFalse();
    assertThat(r.get()).isInstanceOf(ClaimResult.Won.class);
    return ((ClaimResult.Won) r.get()).claim();
  }

  Claim claimWon(String key) {
    ClaimResult r = backend.claim(request(key));
    assertThat(r).isInstanceOf(ClaimResult.Won.class);
    return ((ClaimResult.Won) r).claim();
  }

  /** A backend of its own on {@code ds}, on the fixture's table and clock. */
  SqlLockBackend ownBackend(DataSource ds) {
    return SqlLockBackend.create(
        fixture.settings().toBuilder()
            .dialect(backend.dialect())
            .createTableIfMissing(false)
            .dataSource(ds)
            .build());
  }

  @Test
  @DisplayName("each entry of one batch gets its own single-verb answer")
  void entries_are_independent() {
    String absent = newKey("absent");
    String held = newKey("held");
    String done = newKey("done");
    String lapsed = newKey("lapsed");
    String doneLapsed = newKey("done-lapsed");
    String mine = newKey("mine");
    String tooLong = "k".repeat(SqlLockBackend.MAX_KEY_BYTES + 1);

    backend.claim(new ClaimRequest(held, LEASE, TTL, "other-holder", "fp-held"));
    Claim doneClaim =
        ((ClaimResult.Won) backend.claim(new ClaimRequest(done, LEASE, TTL, token(), "fp-done")))
            .claim();
    assertThat(backend.complete(doneClaim, TTL)).isTrue();
    Claim lapsedClaim =
        ((ClaimResult.Won)
                backend.claim(new ClaimRequest(lapsed, Duration.ofMillis(1), TTL, token(), null)))
            .claim();
    assertThat(backend.complete(claimWon(doneLapsed), Duration.ofMillis(1))).isTrue();
    ClaimRequest mineRequest = request(mine);
    Claim mineFirst = ((ClaimResult.Won) backend.claim(mineRequest)).claim();
    fixture.advanceClock(Duration.ofSeconds(1));

    List<BatchResult<ClaimResult>> results =
        backend.claimAll(
            List.of(
                request(held),
                request(absent),
                request(tooLong),
                request(done),
                request(lapsed),
                mineRequest,
                request(doneLapsed)));

    assertThat(results).hasSize(7);
    assertThat(results.get(0).get())
        .isInstanceOfSatisfying(
            ClaimResult.HeldByOther.class,
            h -> {
              assertThat(h.fingerprint()).isEqualTo("fp-held");
              assertThat(h.leaseExpiry())
                  .isEqualTo(backend.inspect(held).orElseThrow().leaseExpiry());
            });
    Claim absentClaim = won(results.get(1));
    assertThat(absentClaim.fence()).isEqualTo(1);
    assertThat(results.get(2).failure()).isInstanceOf(IllegalArgumentException.class);
    assertThat(results.get(3).get())
        .isInstanceOfSatisfying(
            ClaimResult.AlreadyDone.class, d -> assertThat(d.fingerprint()).isEqualTo("fp-done"));
    Claim lapsedNow = won(results.get(4));
    assertThat(lapsedNow.fence()).isEqualTo(lapsedClaim.fence() + 1);
    Claim mineAgain = won(results.get(5));
    assertThat(mineAgain.fence()).isEqualTo(mineFirst.fence());
    assertThat(mineAgain.leaseExpiry()).isAfter(mineFirst.leaseExpiry());
    assertThat(won(results.get(6)).fence()).isEqualTo(2);
    // Stored as answered.
    assertThat(backend.inspect(absent).orElseThrow().state()).isEqualTo(LockState.CLAIMED);
    assertThat(backend.inspect(lapsed).orElseThrow().fence()).isEqualTo(lapsedNow.fence());

    List<BatchResult<Boolean>> completed =
        backend.completeAll(
            List.of(
                new CompleteRequest(lapsedClaim, TTL), // stale: the key was reclaimed
                new CompleteRequest(absentClaim, TTL),
                new CompleteRequest(new Claim(tooLong, 1, absentClaim.leaseExpiry(), "t"), TTL),
                new CompleteRequest(doneClaim, TTL), // DONE already
                new CompleteRequest(mineAgain, TTL)));
    assertThat(completed.get(0).get()).isFalse();
    assertThat(completed.get(1).get()).isTrue();
    assertThat(completed.get(2).failure()).isInstanceOf(IllegalArgumentException.class);
    assertThat(completed.get(3).get()).isTrue();
    assertThat(completed.get(4).get()).isTrue();
    assertThat(backend.inspect(absent).orElseThrow().state()).isEqualTo(LockState.DONE);
    assertThat(backend.inspect(lapsed).orElseThrow().state()).isEqualTo(LockState.CLAIMED);
    assertThat(backend.inspect(mine).orElseThrow().state()).isEqualTo(LockState.DONE);
  }

  @Test
  @DisplayName("an empty, oversized or repeating batch is refused before any I/O")
  void malformed_batches_are_refused_before_io() {
    CountingDataSource counting = new CountingDataSource(fixture.dataSource());
    SqlLockBackend counted = ownBackend(counting.dataSource());
    String key = newKey("dup");
    List<ClaimRequest> tooMany = new ArrayList<>();
    for (int i = 0; i <= counted.maxBatchSize(); i++) {
      tooMany.add(request(newKey("many")));
    }
    assertThatThrownBy(() -> counted.claimAll(List.of()))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> counted.claimAll(tooMany))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> counted.claimAll(List.of(request(key), request(key))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageNotContaining(key);
    Claim claim = new Claim(key, 1, java.time.Instant.EPOCH, "t");
    assertThatThrownBy(
            () ->
                counted.completeAll(
                    List.of(new CompleteRequest(claim, TTL), new CompleteRequest(claim, TTL))))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(counting.connections()).isZero();
    assertThat(counted.maxBatchSize()).isEqualTo(64);
  }

  @Test
  @DisplayName("a batch is the documented statements on one connection, committed once")
  void one_round_trip_and_one_commit_per_batch() {
    CountingDataSource counting = new CountingDataSource(fixture.dataSource());
    SqlLockBackend counted = ownBackend(counting.dataSource());
    for (int n : new int[] {1, 8, 64}) {
      List<ClaimRequest> requests = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        requests.add(request(newKey("count-" + n)));
      }
      counting.reset();
      List<Claim> claims = counted.claimAll(requests).stream().map(SqlBatchBehaviour::won).toList();
      assertThat(counting.connections()).isEqualTo(1);
      assertThat(counting.statements())
          .as("claim statements, n=%d", n)
          .isEqualTo(claimStatements(n));
      assertThat(counting.commits()).isEqualTo(claimInTransaction() ? 1 : 0);
      assertThat(counting.rollbacks()).isZero();
      int claimTrips = counting.statements() + counting.commits() + counting.autoCommitSwitches();

      counting.reset();
      List<BatchResult<Boolean>> done =
          counted.completeAll(claims.stream().map(c -> new CompleteRequest(c, TTL)).toList());
      assertThat(done).allSatisfy(r -> assertThat(r.get()).isTrue());
      assertThat(counting.connections()).isEqualTo(1);
      assertThat(counting.statements()).as("complete statements, n=%d", n).isEqualTo(1);
      assertThat(counting.commits() + counting.rollbacks() + counting.autoCommitSwitches())
          .isZero();
      System.out.printf(
          "%s batch of %d: claimAll %d round trips (%.3f per entry), completeAll %d (%.3f per"
              + " entry)%n",
          backend.dialect(), n, claimTrips, claimTrips / (double) n, 1, 1.0 / n);
    }
  }

  @Test
  @DisplayName("a deadlock or serialization failure is retried within the bounded retries")
  void transient_failure_is_retried() {
    CountingDataSource counting = new CountingDataSource(fixture.dataSource());
    SqlLockBackend counted = ownBackend(counting.dataSource());
    List<ClaimRequest> requests = List.of(request(newKey("t1")), request(newKey("t2")));
    counting.beforeNextExecute(
        c -> {
          throw new SQLException("injected deadlock", "40P01");
        });
    assertThat(counted.claimAll(requests)).allSatisfy(SqlBatchBehaviour::won);
    assertThat(counting.connections()).isEqualTo(2);
  }

  @Test
  @DisplayName("a round trip that fails as a whole fails every entry, and none is stored")
  void whole_call_failure_fails_every_entry() {
    int n = 3;
    for (int at = 1; at <= claimStatements(n); at++) {
      List<ClaimRequest> requests = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        requests.add(request(newKey("broken-" + at)));
      }
      try (HikariDataSource pool = fixture.target().newPool("batch-broken", 2, null)) {
        CountingDataSource counting = new CountingDataSource(pool);
        SqlLockBackend b = ownBackend(counting.dataSource());
        armCloseBefore(counting, at);
        assertThatThrownBy(() -> b.claimAll(requests))
            .as("connection closed before statement %d", at)
            .isInstanceOf(LockBackendException.class)
            .hasMessageContaining("claimAll failed on SQL table '" + fixture.table() + "'")
            .hasCauseInstanceOf(SQLException.class);
      }
      for (ClaimRequest r : requests) {
        assertThat(backend.inspect(r.key())).as("closed before statement %d", at).isEmpty();
      }
    }
    // A failed completeAll: nothing marked DONE.
    List<Claim> claims = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      claims.add(claimWon(newKey("broken-complete")));
    }
    try (HikariDataSource pool = fixture.target().newPool("batch-broken", 2, null)) {
      CountingDataSource counting = new CountingDataSource(pool);
      SqlLockBackend b = ownBackend(counting.dataSource());
      armCloseBefore(counting, 1);
      assertThatThrownBy(
              () -> b.completeAll(claims.stream().map(c -> new CompleteRequest(c, TTL)).toList()))
          .isInstanceOf(LockBackendException.class)
          .hasMessageContaining("completeAll failed");
    }
    for (Claim c : claims) {
      assertThat(backend.inspect(c.key()).orElseThrow().state()).isEqualTo(LockState.CLAIMED);
    }
  }

  @Test
  @DisplayName(
      "a batch the database refuses because of one key fails that key only: its batch-mates are"
          + " claimed, run once and DONE")
  void a_batch_refused_for_one_key_fails_that_key_only() throws Exception {
    // A constraint a DBA might add: the table refuses one key's row, so a statement holding it
    // fails as a whole (as a value the column cannot take would) while the store stays up.
    String constraint = "refuse_" + run;
    Databases.execute(
        fixture.dataSource(),
        "ALTER TABLE "
            + fixture.table()
            + " ADD CONSTRAINT "
            + constraint
            + " CHECK (lock_key NOT LIKE '%-refused-%')");
    AtomicInteger refusedBatches = new AtomicInteger();
    GuardListener batches =
        new GuardListener() {
          @Override
          public void batch(Verb verb, int size, Duration latency, boolean succeeded) {
            if (verb == Verb.CLAIM && !succeeded) {
              refusedBatches.incrementAndGet();
            }
          }
        };
    int callers = 12;
    ExecutorService pool = Executors.newFixedThreadPool(callers);
    // A lone claim waits, before it goes to the store, until every other caller of the round has
    // parked (queued in the guard for the next batch, or done), so that the callers, which start
    // together, share the next batch. On H2 a claim takes microseconds and the callers would
    // otherwise mostly go one by one (seen in CI: 30 rounds without a batch). A wait that times out
    // leaves its round to prove nothing; the next round tries again.
    Set<Thread> roundCallers = ConcurrentHashMap.newKeySet();
    BatchLockBackend lonesWaitForTheQueue =
        (BatchLockBackend)
            Proxy.newProxyInstance(
                BatchLockBackend.class.getClassLoader(),
                new Class<?>[] {BatchLockBackend.class},
                (proxy, method, args) -> {
                  if (method.getName().equals("claim")
                      && args != null
                      && args.length == 1
                      && args[0] instanceof ClaimRequest) {
                    awaitOthersParked(roundCallers, callers);
                  }
                  try {
                    return method.invoke(backend, args);
                  } catch (InvocationTargetException e) {
                    throw e.getCause();
                  }
                });
    try (IdempotencyGuard guard =
        IdempotencyGuard.newBuilder(lonesWaitForTheQueue)
            .lease(LEASE)
            .ttl(TTL)
            .claimRetries(0)
            .listener(batches)
            .build()) {
      // Callers that start together queue behind the first claim and share a batch; a round whose
      // refused key went alone (it led) proves nothing, so go on until a batch held it (bounded).
      for (int round = 0; round < 30 && refusedBatches.get() == 0; round++) {
        roundCallers.clear();
        List<String> roundKeys = new ArrayList<>();
        for (int i = 0; i < callers; i++) {
          roundKeys.add(newKey(i == callers / 2 ? "refused-" + round : "mate-" + round));
        }
        Map<String, AtomicInteger> runs = new java.util.concurrent.ConcurrentHashMap<>();
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Object>> futures = new ArrayList<>();
        for (String key : roundKeys) {
          futures.add(
              pool.submit(
                  () -> {
                    go.await();
                    roundCallers.add(Thread.currentThread());
                    try {
                      return guard.lock(
                          key,
                          ctx ->
                              runs.computeIfAbsent(key, k -> new AtomicInteger())
                                  .incrementAndGet());
                    } catch (LockBackendException e) {
                      return e;
                    }
                  }));
        }
        go.countDown();
        for (int i = 0; i < callers; i++) {
          String key = roundKeys.get(i);
          Object outcome = futures.get(i).get(120, TimeUnit.SECONDS);
          if (key.contains("-refused-")) {
            assertThat(outcome)
                .as("the refused key, round %d", round)
                .isInstanceOf(LockBackendException.class);
            assertThat(runs).doesNotContainKey(key);
            assertThat(backend.inspect(key)).isEmpty();
          } else {
            assertThat(outcome)
                .as("a batch-mate of the refused key, round %d", round)
                .isInstanceOf(LockResult.Executed.class);
            assertThat(runs.get(key)).hasValue(1);
            assertThat(backend.inspect(key).orElseThrow().state()).isEqualTo(LockState.DONE);
          }
        }
      }
    } finally {
      pool.shutdownNow();
      Databases.execute(
          fixture.dataSource(),
          "ALTER TABLE " + fixture.table() + " DROP CONSTRAINT " + constraint);
    }
    assertThat(refusedBatches.get())
        .as("batches refused as a whole (the refused key shared one with its mates)")
        .isPositive();
  }

  /**
   * Waits (up to 5 s) until all {@code callers} of the round have started and every one but the
   * calling thread is parked.
   */
  private static void awaitOthersParked(Set<Thread> roundCallers, int callers) {
    Thread self = Thread.currentThread();
    try {
      await()
          .pollDelay(Duration.ZERO)
          .pollInterval(Duration.ofMillis(1))
          .atMost(Duration.ofSeconds(5))
          .until(
              () ->
                  roundCallers.size() == callers
                      && roundCallers.stream()
                          .allMatch(
                              t ->
                                  t == self
                                      || t.getState() == Thread.State.WAITING
                                      || t.getState() == Thread.State.TIMED_WAITING));
    } catch (ConditionTimeoutException e) {
      // This round may not batch; the next one tries again.
    }
  }

  @Test
  @DisplayName(
      "completes sent without waiting (lockAsync) share batches: every key runs once and ends"
          + " DONE, and every stage completes")
  void completes_sent_without_waiting_share_batches_and_all_end_done() throws Exception {
    AtomicInteger completeBatches = new AtomicInteger();
    AtomicInteger batchedCompletes = new AtomicInteger();
    GuardListener batches =
        new GuardListener() {
          @Override
          public void batch(Verb verb, int size, Duration latency, boolean succeeded) {
            if (verb == Verb.COMPLETE && succeeded) {
              completeBatches.incrementAndGet();
              batchedCompletes.addAndGet(size);
            }
          }
        };
    int callers = 12;
    int perCaller = 20;
    ExecutorService pool = Executors.newFixedThreadPool(callers);
    Map<String, AtomicInteger> runs = new java.util.concurrent.ConcurrentHashMap<>();
    List<java.util.concurrent.CompletableFuture<LockResult<Integer>>> stages =
        new java.util.concurrent.CopyOnWriteArrayList<>();
    try (IdempotencyGuard guard =
        IdempotencyGuard.newBuilder(backend)
            .lease(LEASE)
            .ttl(TTL)
            .claimRetries(0)
            .listener(batches)
            .build()) {
      CountDownLatch go = new CountDownLatch(1);
      List<Future<?>> callerRuns = new ArrayList<>();
      List<String> all = new java.util.concurrent.CopyOnWriteArrayList<>();
      for (int c = 0; c < callers; c++) {
        callerRuns.add(
            pool.submit(
                () -> {
                  go.await();
                  for (int i = 0; i < perCaller; i++) {
                    String key = newKey("async");
                    all.add(key);
                    stages.add(
                        guard
                            .lockAsync(
                                key,
                                dev.pubsubworker.core.CallOptions.defaults(),
                                ctx ->
                                    runs.computeIfAbsent(key, k -> new AtomicInteger())
                                        .incrementAndGet())
                            .toCompletableFuture());
                  }
                  return null;
                }));
      }
      go.countDown();
      for (Future<?> f : callerRuns) {
        f.get(120, TimeUnit.SECONDS);
      }
      for (java.util.concurrent.CompletableFuture<LockResult<Integer>> stage : stages) {
        assertThat(stage.get(120, TimeUnit.SECONDS))
            .isInstanceOfSatisfying(
                LockResult.Executed.class,
                e ->
                    assertThat(e.completion())
                        .isEqualTo(dev.pubsubworker.core.Completion.COMPLETED));
      }
      assertThat(all).hasSize(callers * perCaller);
      for (String key : all) {
        assertThat(runs.get(key)).as(key).hasValue(1);
        assertThat(backend.inspect(key).orElseThrow().state()).as(key).isEqualTo(LockState.DONE);
      }
    } finally {
      pool.shutdownNow();
    }
    System.out.printf(
        "%d async completes: %d batches holding %d of them%n",
        callers * perCaller, completeBatches.get(), batchedCompletes.get());
  }

  /** Closes the physical connection right before the {@code at}-th statement from now. */
  private static void armCloseBefore(CountingDataSource counting, int at) {
    if (at == 1) {
      counting.beforeNextExecute(pooled -> pooled.unwrap(Connection.class).close());
    } else {
      counting.beforeNextExecute(pooled -> armCloseBefore(counting, at - 1));
    }
  }

  @Test
  @DisplayName("concurrent overlapping batches: no deadlock escapes, exactly one winner per key")
  void concurrent_overlapping_batches() throws Exception {
    int threads = 4;
    int rounds = 8;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      for (int round = 0; round < rounds; round++) {
        List<String> keySet = new ArrayList<>();
        for (int i = 0; i < 24; i++) {
          keySet.add(newKey("overlap-" + round));
        }
        CountDownLatch go = new CountDownLatch(1);
        List<Future<List<Claim>>> futures = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
          SqlLockBackend b = t % 2 == 0 ? backend : (SqlLockBackend) fixture.secondInstance();
          futures.add(
              pool.submit(
                  () -> {
                    List<String> mine = new ArrayList<>(keySet);
                    Collections.shuffle(mine, ThreadLocalRandom.current());
                    List<ClaimRequest> batch =
                        mine.subList(0, 16).stream().map(SqlBatchBehaviour::request).toList();
                    go.await();
                    List<Claim> won = new ArrayList<>();
                    for (BatchResult<ClaimResult> r : b.claimAll(batch)) {
                      ClaimResult c = r.get();
                      if (c instanceof ClaimResult.Won w) {
                        won.add(w.claim());
                      } else {
                        // Held by a faster batch, or already completed by it.
                        assertThat(c)
                            .isInstanceOfAny(
                                ClaimResult.HeldByOther.class, ClaimResult.AlreadyDone.class);
                      }
                    }
                    if (!won.isEmpty()) {
                      List<BatchResult<Boolean>> done =
                          b.completeAll(
                              won.stream().map(c -> new CompleteRequest(c, TTL)).toList());
                      assertThat(done).allSatisfy(d -> assertThat(d.get()).isTrue());
                    }
                    return won;
                  }));
        }
        go.countDown();
        Map<String, Integer> winners = new HashMap<>();
        for (Future<List<Claim>> f : futures) {
          for (Claim c : f.get(120, TimeUnit.SECONDS)) {
            assertThat(c.fence()).isEqualTo(1);
            winners.merge(c.key(), 1, Integer::sum);
          }
        }
        for (String key : keySet) {
          boolean asked = backend.inspect(key).isPresent();
          assertThat(winners.getOrDefault(key, 0))
              .as("winners of a key in round %d", round)
              .isEqualTo(asked ? 1 : 0);
          if (asked) {
            assertThat(backend.inspect(key).orElseThrow().state()).isEqualTo(LockState.DONE);
          }
        }
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
