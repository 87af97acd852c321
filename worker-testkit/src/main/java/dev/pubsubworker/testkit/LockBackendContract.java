package dev.pubsubworker.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pubsubworker.core.BatchLockBackend;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.Completion;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.InvalidLockRecordException;
import dev.pubsubworker.core.KeyInProgressException;
import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.core.LockRecord;
import dev.pubsubworker.core.LockResult;
import dev.pubsubworker.core.LockState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.LongFunction;
import java.util.stream.Stream;
import org.assertj.core.api.ThrowableAssert;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The contract every {@link LockBackend} passes: each row of the transition table ({@link
 * LockBackend}; docs/design.md), invariants 1–7, the store-level hazards of the reference design,
 * key rules, and the admin verbs, each pinned by a test whose name says which.
 *
 * <p>A backend's test extends this class and supplies a {@link BackendFixture}:
 *
 * <pre>{@code
 * class RedisLockBackendContractTest extends LockBackendContract {
 *   @Override
 *   protected BackendFixture createFixture() {
 *     return new RedisFixture();
 *   }
 * }
 * }</pre>
 *
 * <p>One fixture serves the whole class (created before the first test, closed after the last).
 * Every test uses fresh keys, moves the backend's clock only forward, and never assumes an empty
 * store.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class LockBackendContract {

  /** The lease every test claims with unless it says otherwise. */
  protected static final Duration LEASE = Duration.ofSeconds(30);

  /** The suppression window every test completes with unless it says otherwise. */
  protected static final Duration TTL = Duration.ofHours(1);

  /** The retention of CLAIMED records every test claims with. */
  protected static final Duration RETENTION = Duration.ofHours(2);

  private final String runPrefix = "contract-" + UUID.randomUUID().toString().substring(0, 8) + "-";
  private final AtomicInteger keySequence = new AtomicInteger();
  private BackendFixture fixture;

  /** Creates the fixture for this class's tests; called once, before the first test. */
  protected abstract BackendFixture createFixture() throws Exception;

  @BeforeAll
  final void openFixture() throws Exception {
    fixture = createFixture();
  }

  @AfterAll
  final void closeFixture() {
    if (fixture != null) {
      fixture.close();
    }
  }

  /** The backend under test. */
  protected final LockBackend backend() {
    return fixture.backend();
  }

  /** The admin view of the backend under test. */
  protected final LockAdmin admin() {
    return fixture.admin();
  }

  /** Moves the backend's clock forward. */
  protected final void advance(Duration amount) {
    fixture.advanceClock(amount);
  }

  /** A key no other test uses. */
  protected final String newKey(String name) {
    return runPrefix + name + "-" + keySequence.incrementAndGet();
  }

  /** A fresh claim token. */
  protected static String newToken() {
    return UUID.randomUUID().toString();
  }

  /** Claims {@code key} with the default lease and retention and a fresh token. */
  protected final ClaimResult claim(String key) {
    return backend().claim(new ClaimRequest(key, LEASE, RETENTION, newToken(), null));
  }

  /** Claims {@code key} and asserts the claim was won. */
  protected final Claim claimWon(String key) {
    return won(claim(key));
  }

  /** Asserts {@code result} is Won and returns its claim. */
  protected static Claim won(ClaimResult result) {
    assertThat(result).isInstanceOf(ClaimResult.Won.class);
    return ((ClaimResult.Won) result).claim();
  }

  /** The key's stored record, which must exist. */
  protected final LockRecord record(String key) {
    Optional<LockRecord> r = admin().inspect(key);
    assertThat(r).as("record for %s", key).isPresent();
    return r.orElseThrow();
  }

  /** A guard on the backend under test, with retries off and the heartbeat on. */
  protected final IdempotencyGuard guard() {
    return IdempotencyGuard.newBuilder(backend()).lease(LEASE).ttl(TTL).claimRetries(0).build();
  }

  // ---------------------------------------------------------------------------------------------
  // The transition table, row by row.
  // ---------------------------------------------------------------------------------------------

  @Nested
  @DisplayName("transition table")
  class TransitionTable {

    @Test
    @DisplayName("row 1: absent + claim -> CLAIMED, Won, fence 1")
    void row01_absent_claim_wins_with_fence_1() {
      String key = newKey("row01");
      Claim c = claimWon(key);
      assertThat(c.fence()).isEqualTo(1);
      assertThat(c.key()).isEqualTo(key);
      LockRecord r = record(key);
      assertThat(r.state()).isEqualTo(LockState.CLAIMED);
      assertThat(r.fence()).isEqualTo(1);
      assertThat(r.leaseExpiry()).isEqualTo(c.leaseExpiry());
      assertThat(r.claimToken()).isEqualTo(c.claimToken());
    }

    @Test
    @DisplayName(
        "row 2: CLAIMED + claim while now < leaseExpiry -> HeldByOther(leaseExpiry), fence same")
    void row02_claimed_claim_while_lease_live_is_held_by_other() {
      String key = newKey("row02");
      Claim c = claimWon(key);
      advance(LEASE.minusSeconds(1));
      ClaimResult second = claim(key);
      assertThat(second).isInstanceOf(ClaimResult.HeldByOther.class);
      assertThat(((ClaimResult.HeldByOther) second).leaseExpiry()).isEqualTo(c.leaseExpiry());
      assertThat(record(key).fence()).isEqualTo(1);
      assertThat(record(key).state()).isEqualTo(LockState.CLAIMED);
    }

    @Test
    @DisplayName("row 3: CLAIMED + claim when now >= leaseExpiry -> CLAIMED, Won, fence +1")
    void row03_claimed_claim_after_lease_lapsed_wins_with_fence_plus_1() {
      String key = newKey("row03");
      claimWon(key);
      advance(LEASE);
      Claim second = claimWon(key);
      assertThat(second.fence()).isEqualTo(2);
      assertThat(record(key).state()).isEqualTo(LockState.CLAIMED);
      assertThat(record(key).fence()).isEqualTo(2);
    }

    @Test
    @DisplayName("row 4: CLAIMED + extend, fence matches -> leaseExpiry = now + lease, true")
    void row04_claimed_extend_with_matching_fence_renews_lease() {
      String key = newKey("row04");
      Claim c = claimWon(key);
      advance(Duration.ofSeconds(20));
      assertThat(backend().extend(c, LEASE)).isTrue();
      LockRecord r = record(key);
      assertThat(r.leaseExpiry()).isAfter(c.leaseExpiry());
      assertThat(r.fence()).isEqualTo(1);
      // Past the original lease but within the renewed one: still held.
      advance(Duration.ofSeconds(20));
      assertThat(claim(key)).isInstanceOf(ClaimResult.HeldByOther.class);
      advance(Duration.ofSeconds(11));
      assertThat(claimWon(key).fence()).isEqualTo(2);
    }

    @Test
    @DisplayName("row 4: extend after the lease lapsed but before a reclaim still renews it")
    void row04_extend_after_lapse_but_before_reclaim_renews_lease() {
      String key = newKey("row04b");
      Claim c = claimWon(key);
      advance(LEASE.plusSeconds(5));
      assertThat(backend().extend(c, LEASE)).isTrue();
      assertThat(claim(key)).isInstanceOf(ClaimResult.HeldByOther.class);
    }

    @Test
    @DisplayName("row 5: CLAIMED + extend with a stale fence -> unchanged, false")
    void row05_claimed_extend_with_stale_fence_is_refused() {
      String key = newKey("row05");
      Claim first = claimWon(key);
      advance(LEASE);
      Claim second = claimWon(key);
      LockRecord before = record(key);
      assertThat(backend().extend(first, LEASE)).isFalse();
      LockRecord after = record(key);
      assertThat(after.fence()).isEqualTo(second.fence());
      assertThat(after.leaseExpiry()).isEqualTo(before.leaseExpiry());
    }

    @Test
    @DisplayName("row 6: CLAIMED + complete, fence matches -> DONE, expiresAt = now + ttl, true")
    void row06_claimed_complete_with_matching_fence_marks_done() {
      String key = newKey("row06");
      Claim c = claimWon(key);
      assertThat(backend().complete(c, TTL)).isTrue();
      LockRecord r = record(key);
      assertThat(r.state()).isEqualTo(LockState.DONE);
      assertThat(r.fence()).isEqualTo(1);
      Duration window = Duration.between(r.observedAt(), r.expiresAt());
      assertThat(window).isLessThanOrEqualTo(TTL).isGreaterThan(TTL.minusMinutes(1));
    }

    @Test
    @DisplayName("row 7: CLAIMED + complete with a stale fence -> unchanged, false")
    void row07_claimed_complete_with_stale_fence_is_refused() {
      String key = newKey("row07");
      Claim first = claimWon(key);
      advance(LEASE);
      claimWon(key);
      assertThat(backend().complete(first, TTL)).isFalse();
      assertThat(record(key).state()).isEqualTo(LockState.CLAIMED);
      assertThat(record(key).fence()).isEqualTo(2);
    }

    @Test
    @DisplayName("row 8: CLAIMED + release, fence matches -> CLAIMED, leaseExpiry = now, fence +1")
    void row08_claimed_release_with_matching_fence_expires_lease_and_bumps_fence() {
      String key = newKey("row08");
      Claim c = claimWon(key);
      backend().release(c);
      LockRecord r = record(key);
      assertThat(r.state()).isEqualTo(LockState.CLAIMED);
      assertThat(r.fence()).isEqualTo(2);
      assertThat(r.leaseExpiry()).isBefore(c.leaseExpiry());
      assertThat(r.reclaimable()).isTrue();
      // Reclaimable at once, without moving the clock.
      assertThat(claimWon(key).fence()).isEqualTo(3);
    }

    @Test
    @DisplayName("row 8: release with a stale fence is a no-op")
    void row08_release_with_stale_fence_is_a_noop() {
      String key = newKey("row08b");
      Claim first = claimWon(key);
      advance(LEASE);
      Claim second = claimWon(key);
      backend().release(first);
      LockRecord r = record(key);
      assertThat(r.fence()).isEqualTo(second.fence());
      assertThat(claim(key)).isInstanceOf(ClaimResult.HeldByOther.class);
    }

    @Test
    @DisplayName("row 9: DONE + claim while now < expiresAt -> AlreadyDone, fence same")
    void row09_done_claim_within_ttl_is_already_done() {
      String key = newKey("row09");
      Claim c = claimWon(key);
      assertThat(backend().complete(c, TTL)).isTrue();
      advance(TTL.minusSeconds(1));
      assertThat(claim(key)).isInstanceOf(ClaimResult.AlreadyDone.class);
      assertThat(record(key).state()).isEqualTo(LockState.DONE);
      assertThat(record(key).fence()).isEqualTo(1);
    }

    @Test
    @DisplayName("row 10: DONE + claim when now >= expiresAt -> CLAIMED, Won, fence +1")
    void row10_done_claim_after_ttl_wins_with_fence_plus_1() {
      String key = newKey("row10");
      Claim c = claimWon(key);
      assertThat(backend().complete(c, TTL)).isTrue();
      advance(TTL);
      Claim again = claimWon(key);
      // The record may have been reaped by the store once expired (a fresh record, fence 1) or
      // still be there (fence +1); it must never be DONE any more.
      assertThat(again.fence()).isIn(1L, 2L);
      assertThat(record(key).state()).isEqualTo(LockState.CLAIMED);
    }

    @Test
    @DisplayName("row 11: DONE + complete / release / extend -> DONE, true / no-op / false")
    void row11_done_complete_release_extend_are_true_noop_false() {
      String key = newKey("row11");
      Claim c = claimWon(key);
      assertThat(backend().complete(c, TTL)).isTrue();
      LockRecord done = record(key);
      assertThat(backend().complete(c, TTL)).isTrue();
      backend().release(c);
      assertThat(backend().extend(c, LEASE)).isFalse();
      LockRecord after = record(key);
      assertThat(after.state()).isEqualTo(LockState.DONE);
      assertThat(after.fence()).isEqualTo(done.fence());
      assertThat(after.expiresAt()).isEqualTo(done.expiresAt());
    }

    @Test
    @DisplayName(
        "completeAsync answers as complete: true on a match (DONE) and on DONE, false on a stale"
            + " fence or a gone record")
    void complete_async_answers_as_complete_does() throws Exception {
      String key = newKey("async");
      Claim c = claimWon(key);
      assertThat(answer(backend().completeAsync(c, TTL))).isTrue();
      assertThat(record(key).state()).isEqualTo(LockState.DONE);
      assertThat(answer(backend().completeAsync(c, TTL))).isTrue();

      String stale = newKey("async-stale");
      Claim first = claimWon(stale);
      advance(LEASE);
      claimWon(stale);
      assertThat(answer(backend().completeAsync(first, TTL))).isFalse();
      assertThat(record(stale).state()).isEqualTo(LockState.CLAIMED);

      String gone = newKey("async-gone");
      Claim forgotten = claimWon(gone);
      assertThat(admin().forget(gone)).isTrue();
      assertThat(answer(backend().completeAsync(forgotten, TTL))).isFalse();
      assertThat(admin().inspect(gone)).isEmpty();
    }

    @Test
    @DisplayName("absent record: complete -> false, release -> no-op, extend -> false")
    void absent_record_complete_release_extend_are_false_noop_false() {
      String key = newKey("absent");
      Claim c = claimWon(key);
      assertThat(admin().forget(key)).isTrue();
      assertThat(backend().complete(c, TTL)).isFalse();
      backend().release(c);
      assertThat(backend().extend(c, LEASE)).isFalse();
      assertThat(admin().inspect(key)).isEmpty();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Invariants 1-7 (docs/design.md, "Invariants").
  // ---------------------------------------------------------------------------------------------

  @Nested
  @DisplayName("invariants")
  class Invariants {

    @Test
    @DisplayName(
        "invariant 1: the fence only rises while a record exists; verbs need an exact match")
    void invariant1_fence_only_rises_and_verbs_need_an_exact_fence() {
      String key = newKey("inv1");
      long last = 0;
      for (int i = 0; i < 4; i++) {
        Claim c = claimWon(key);
        assertThat(c.fence()).isGreaterThan(last);
        last = c.fence();
        Claim lower =
            new Claim(
                key,
                c.fence() > 1 ? c.fence() - 1 : c.fence() + 5,
                c.leaseExpiry(),
                c.claimToken());
        Claim higher = new Claim(key, c.fence() + 1, c.leaseExpiry(), c.claimToken());
        assertThat(backend().extend(lower, LEASE)).isFalse();
        assertThat(backend().extend(higher, LEASE)).isFalse();
        assertThat(backend().complete(lower, TTL)).isFalse();
        assertThat(backend().complete(higher, TTL)).isFalse();
        backend().release(higher);
        assertThat(record(key).fence()).isEqualTo(c.fence());
        if (i % 2 == 0) {
          backend().release(c);
        } else {
          advance(LEASE);
        }
        assertThat(record(key).fence()).isGreaterThanOrEqualTo(c.fence());
      }
    }

    @Test
    @DisplayName(
        "invariant 2: complete has no lease check; a lapsed, un-reclaimed holder commits DONE")
    void invariant2_complete_has_no_lease_check() {
      String key = newKey("inv2");
      Claim c = claimWon(key);
      advance(LEASE.multipliedBy(3));
      assertThat(backend().complete(c, TTL)).isTrue();
      assertThat(record(key).state()).isEqualTo(LockState.DONE);
      assertThat(claim(key)).isInstanceOf(ClaimResult.AlreadyDone.class);
    }

    @Test
    @DisplayName("invariant 3: release never deletes; it expires the lease and bumps the fence")
    void invariant3_release_never_deletes() {
      String key = newKey("inv3");
      Claim c = claimWon(key);
      backend().release(c);
      assertThat(admin().inspect(key)).isPresent();
      assertThat(record(key).fence()).isEqualTo(c.fence() + 1);
      assertThat(claimWon(key).fence()).isEqualTo(c.fence() + 2);
    }

    @Test
    @DisplayName("invariant 4: a record is physically removed only after expiresAt")
    void invariant4_record_is_removed_only_after_expires_at() {
      String done = newKey("inv4-done");
      String claimed = newKey("inv4-claimed");
      assertThat(backend().complete(claimWon(done), TTL)).isTrue();
      claimWon(claimed);
      purgeAll();
      assertThat(admin().inspect(done)).isPresent();
      assertThat(admin().inspect(claimed)).isPresent();
      // The CLAIMED record's lease lapsed long ago but its retention has not: still kept.
      advance(TTL.minusSeconds(10));
      purgeAll();
      assertThat(admin().inspect(done)).isPresent();
      assertThat(admin().inspect(claimed)).isPresent();
      advance(Duration.ofSeconds(10));
      purgeAll();
      assertThat(admin().inspect(done)).isEmpty();
      assertThat(admin().inspect(claimed)).isPresent();
      advance(RETENTION.minus(TTL).plus(LEASE));
      purgeAll();
      assertThat(admin().inspect(claimed)).isEmpty();
    }

    @Test
    @DisplayName("invariant 5: of N concurrent claims on an absent key exactly one wins")
    void invariant5_concurrent_claims_on_absent_key_exactly_one_wins() throws Exception {
      String key = newKey("inv5-absent");
      List<ClaimResult> results = claimConcurrently(key, 16);
      assertThat(results.stream().filter(r -> r instanceof ClaimResult.Won).count()).isEqualTo(1);
      assertThat(results.stream().filter(r -> r instanceof ClaimResult.HeldByOther).count())
          .isEqualTo(15);
      assertThat(record(key).fence()).isEqualTo(1);
    }

    @Test
    @DisplayName("invariant 5: of N concurrent claims on a reclaimable key exactly one wins")
    void invariant5_concurrent_claims_on_reclaimable_key_exactly_one_wins() throws Exception {
      String key = newKey("inv5-reclaim");
      claimWon(key);
      advance(LEASE);
      List<ClaimResult> results = claimConcurrently(key, 16);
      List<Claim> wins = new ArrayList<>();
      for (ClaimResult r : results) {
        if (r instanceof ClaimResult.Won w) {
          wins.add(w.claim());
        }
      }
      assertThat(wins).hasSize(1);
      assertThat(wins.get(0).fence()).isEqualTo(2);
      assertThat(record(key).fence()).isEqualTo(2);
    }

    @Test
    @DisplayName(
        "invariant 6: a claim retried with the same token re-affirms itself (no self-lock, no bump)")
    void invariant6_claim_is_retry_safe_with_the_same_token() {
      String key = newKey("inv6");
      ClaimRequest request = new ClaimRequest(key, LEASE, RETENTION, newToken(), null);
      Claim first = won(backend().claim(request));
      // The response was lost; the caller retries with the same token.
      Claim retried = won(backend().claim(request));
      assertThat(retried.fence()).isEqualTo(first.fence());
      assertThat(record(key).fence()).isEqualTo(first.fence());
      // The re-affirmed claim is fully usable, and anybody else is still kept out.
      assertThat(claim(key)).isInstanceOf(ClaimResult.HeldByOther.class);
      assertThat(backend().complete(retried, TTL)).isTrue();
    }

    @Test
    @DisplayName("invariant 6: retry safety also holds on the reclaim path")
    void invariant6_claim_is_retry_safe_on_the_reclaim_path() {
      String key = newKey("inv6-reclaim");
      claimWon(key);
      advance(LEASE);
      ClaimRequest request = new ClaimRequest(key, LEASE, RETENTION, newToken(), null);
      Claim reclaimed = won(backend().claim(request));
      assertThat(reclaimed.fence()).isEqualTo(2);
      Claim retried = won(backend().claim(request));
      assertThat(retried.fence()).isEqualTo(2);
      assertThat(record(key).fence()).isEqualTo(2);
    }

    @Test
    @DisplayName("invariant 7: expiry is judged on the backend's clock")
    void invariant7_expiry_is_judged_on_the_backend_clock() {
      String key = newKey("inv7");
      claimWon(key);
      advance(LEASE.minusSeconds(1));
      assertThat(claim(key)).isInstanceOf(ClaimResult.HeldByOther.class);
      advance(Duration.ofSeconds(1));
      assertThat(claimWon(key).fence()).isEqualTo(2);
      LockRecord r = record(key);
      // observedAt is the backend clock's reading, so it agrees with the lease it just set.
      assertThat(Duration.between(r.observedAt(), r.leaseExpiry()))
          .isLessThanOrEqualTo(LEASE)
          .isGreaterThan(LEASE.minusMinutes(1));
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The hazards of the reference design that concern the store.
  // ---------------------------------------------------------------------------------------------

  @Nested
  @DisplayName("Scenarios")
  class Scenarios {

    @Test
    @DisplayName("transport redelivery: the second delivery finds DONE -> Duplicate, body skipped")
    void scenario_transport_redelivery_is_a_duplicate() {
      String key = newKey("redelivery");
      AtomicInteger runs = new AtomicInteger();
      try (IdempotencyGuard guard = guard()) {
        LockResult<Integer> first = guard.lock(key, ctx -> runs.incrementAndGet());
        LockResult<Integer> second = guard.lock(key, ctx -> runs.incrementAndGet());
        assertThat(first).isInstanceOf(LockResult.Executed.class);
        assertThat(((LockResult.Executed<Integer>) first).completion())
            .isEqualTo(Completion.COMPLETED);
        assertThat(second).isInstanceOf(LockResult.Duplicate.class);
      }
      assertThat(runs).hasValue(1);
    }

    @Test
    @DisplayName("concurrent duplicate: same key racing in parallel admits exactly one body")
    void scenario_concurrent_duplicate_admits_one_body() throws Exception {
      String key = newKey("concurrent");
      AtomicInteger runs = new AtomicInteger();
      CountDownLatch inWork = new CountDownLatch(1);
      CountDownLatch finish = new CountDownLatch(1);
      try (IdempotencyGuard guard = guard()) {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
          Future<LockResult<Integer>> holder =
              pool.submit(
                  () ->
                      guard.lock(
                          key,
                          ctx -> {
                            inWork.countDown();
                            assertThat(finish.await(30, TimeUnit.SECONDS)).isTrue();
                            return runs.incrementAndGet();
                          }));
          assertThat(inWork.await(30, TimeUnit.SECONDS)).isTrue();
          assertThatThrownBy(() -> guard.lock(key, ctx -> runs.incrementAndGet()))
              .isInstanceOf(KeyInProgressException.class);
          finish.countDown();
          assertThat(holder.get(30, TimeUnit.SECONDS).executed()).isTrue();
          // On retry, the contended delivery now sees DONE.
          assertThat(guard.lock(key, ctx -> runs.incrementAndGet()))
              .isInstanceOf(LockResult.Duplicate.class);
        } finally {
          pool.shutdownNow();
        }
      }
      assertThat(runs).hasValue(1);
    }

    @Test
    @DisplayName("crashed holder: the CLAIMED record self-heals after lease expiry (fence +1)")
    void scenario_crashed_holder_self_heals_after_lease_expiry() {
      String key = newKey("crash");
      claimWon(key); // the holder dies here: no release, no complete
      assertThat(claim(key)).isInstanceOf(ClaimResult.HeldByOther.class);
      advance(LEASE);
      Claim next = claimWon(key);
      assertThat(next.fence()).isEqualTo(2);
      assertThat(backend().complete(next, TTL)).isTrue();
    }

    @Test
    @DisplayName("zombie: a reclaimed holder cannot complete over the newer claim")
    void scenario_zombie_cannot_complete_over_a_newer_claim() {
      String key = newKey("zombie-complete");
      Claim zombie = claimWon(key);
      advance(LEASE);
      Claim current = claimWon(key);
      assertThat(backend().complete(zombie, TTL)).isFalse();
      assertThat(record(key).state()).isEqualTo(LockState.CLAIMED);
      assertThat(backend().complete(current, TTL)).isTrue();
    }

    @Test
    @DisplayName("zombie: a reclaimed holder cannot release the newer claim")
    void scenario_zombie_cannot_release_a_newer_claim() {
      String key = newKey("zombie-release");
      Claim zombie = claimWon(key);
      advance(LEASE);
      Claim current = claimWon(key);
      backend().release(zombie);
      assertThat(record(key).fence()).isEqualTo(current.fence());
      assertThat(claim(key)).isInstanceOf(ClaimResult.HeldByOther.class);
      assertThat(backend().extend(current, LEASE)).isTrue();
    }

    @Test
    @DisplayName("zombie: the guard reports a fenced-out completion instead of replaying the work")
    void scenario_zombie_is_fenced_out_at_complete_through_the_guard() {
      String key = newKey("zombie-guard");
      AtomicInteger runs = new AtomicInteger();
      try (IdempotencyGuard guard =
          IdempotencyGuard.newBuilder(backend())
              .lease(LEASE)
              .ttl(TTL)
              .heartbeat(false)
              .claimRetries(0)
              .build()) {
        LockResult<Integer> result =
            guard.lock(
                key,
                ctx -> {
                  // The work outruns its lease and a redelivery reclaims the key meanwhile.
                  advance(LEASE);
                  claimWon(key);
                  return runs.incrementAndGet();
                });
        assertThat(result).isInstanceOf(LockResult.Executed.class);
        assertThat(((LockResult.Executed<Integer>) result).completion())
            .isEqualTo(Completion.FENCED_OUT);
      }
      assertThat(runs).hasValue(1);
      assertThat(record(key).state()).isEqualTo(LockState.CLAIMED);
    }

    @Test
    @DisplayName("work outran an un-reclaimed lease: the late complete still commits DONE")
    void scenario_work_outran_an_unreclaimed_lease_still_commits() {
      String key = newKey("outran");
      try (IdempotencyGuard guard =
          IdempotencyGuard.newBuilder(backend())
              .lease(LEASE)
              .ttl(TTL)
              .heartbeat(false)
              .claimRetries(0)
              .build()) {
        LockResult<String> result =
            guard.lock(
                key,
                ctx -> {
                  advance(LEASE.multipliedBy(2));
                  return "sent";
                });
        assertThat(((LockResult.Executed<String>) result).completion())
            .isEqualTo(Completion.COMPLETED);
        assertThat(guard.lock(key, ctx -> "again")).isInstanceOf(LockResult.Duplicate.class);
      }
    }

    @Test
    @DisplayName("release advances the fence: a released claim can never complete")
    void scenario_release_advances_the_fence_so_a_released_claim_cannot_complete() {
      String key = newKey("release-fence");
      Claim c = claimWon(key);
      backend().release(c);
      assertThat(backend().complete(c, TTL)).isFalse();
      assertThat(backend().extend(c, LEASE)).isFalse();
      assertThat(record(key).state()).isEqualTo(LockState.CLAIMED);
    }

    @Test
    @DisplayName(
        "work throws: the guard releases, so the redelivery runs at once and succeeds once")
    void scenario_transient_failure_releases_and_the_retry_runs_once() {
      String key = newKey("transient");
      AtomicInteger runs = new AtomicInteger();
      try (IdempotencyGuard guard = guard()) {
        assertThatThrownBy(
                () ->
                    guard.lock(
                        key,
                        ctx -> {
                          runs.incrementAndGet();
                          throw new IllegalStateException("supplier down");
                        }))
            .isInstanceOf(IllegalStateException.class)
            .hasMessage("supplier down");
        assertThat(record(key).reclaimable()).isTrue();
        assertThat(guard.lock(key, ctx -> runs.incrementAndGet()).executed()).isTrue();
        assertThat(guard.lock(key, ctx -> runs.incrementAndGet()).executed()).isFalse();
      }
      assertThat(runs).hasValue(2);
    }

    @Test
    @DisplayName("TTL expiry: a genuinely new occurrence long after success runs again")
    void scenario_ttl_expiry_makes_a_done_key_reclaimable() {
      String key = newKey("ttl");
      AtomicInteger runs = new AtomicInteger();
      try (IdempotencyGuard guard = guard()) {
        guard.lock(key, ctx -> runs.incrementAndGet());
        advance(TTL);
        LockResult<Integer> later = guard.lock(key, ctx -> runs.incrementAndGet());
        assertThat(later.executed()).isTrue();
      }
      assertThat(runs).hasValue(2);
    }

    @Test
    @DisplayName("mutex cycle: every call runs and releases; the key never becomes DONE")
    void scenario_mutex_cycle_reclaims_without_ever_completing() {
      String key = newKey("mutex");
      AtomicInteger runs = new AtomicInteger();
      long lastFence = 0;
      try (IdempotencyGuard guard = guard()) {
        for (int i = 0; i < 4; i++) {
          long fence = guard.mutex(key, ctx -> ctx.fencingToken());
          runs.incrementAndGet();
          assertThat(fence).isGreaterThan(lastFence);
          lastFence = fence;
          LockRecord r = record(key);
          assertThat(r.state()).isEqualTo(LockState.CLAIMED);
          assertThat(r.reclaimable()).isTrue();
        }
      }
      assertThat(runs).hasValue(4);
    }

    @Test
    @DisplayName("mutex on a DONE key (left by lock) gives InProgress, never a run")
    void scenario_done_key_gives_in_progress_to_mutex() {
      String key = newKey("done-mutex");
      AtomicInteger runs = new AtomicInteger();
      try (IdempotencyGuard guard = guard()) {
        guard.lock(key, ctx -> runs.incrementAndGet());
        assertThatThrownBy(() -> guard.mutex(key, ctx -> runs.incrementAndGet()))
            .isInstanceOfSatisfying(
                KeyInProgressException.class,
                e -> assertThat(e.reason()).isEqualTo(KeyInProgressException.Reason.DONE));
      }
      assertThat(runs).hasValue(1);
      assertThat(record(key).state()).isEqualTo(LockState.DONE);
    }

    @Test
    @DisplayName("forget re-enables a key: the next delivery runs again, at fence 1")
    void scenario_forget_reenables_a_key() {
      String key = newKey("forget");
      AtomicInteger runs = new AtomicInteger();
      try (IdempotencyGuard guard = guard()) {
        guard.lock(key, ctx -> runs.incrementAndGet());
        assertThat(admin().forget(key)).isTrue();
        assertThat(admin().forget(key)).isFalse();
        LockResult<Long> replay = guard.lock(key, ctx -> ctx.fencingToken());
        assertThat(replay.result()).contains(1L);
      }
      assertThat(runs).hasValue(1);
    }

    @Test
    @DisplayName("purgeExpired removes only expired records, in batches, and counts them")
    void scenario_purge_expired_removes_only_expired_records() {
      List<String> expiredDone = new ArrayList<>();
      List<String> kept = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        String k = newKey("purge-expired");
        assertThat(backend().complete(claimWon(k), Duration.ofMinutes(1))).isTrue();
        expiredDone.add(k);
      }
      String liveDone = newKey("purge-live-done");
      assertThat(backend().complete(claimWon(liveDone), TTL)).isTrue();
      kept.add(liveDone);
      String lapsedClaim = newKey("purge-lapsed-claim");
      claimWon(lapsedClaim); // lease lapses, retention (2 h) does not
      kept.add(lapsedClaim);
      advance(Duration.ofMinutes(2));
      String freshClaim = newKey("purge-fresh-claim");
      claimWon(freshClaim);
      kept.add(freshClaim);

      assertThat(admin().purgeExpired(1)).isEqualTo(1);
      int removed = 1 + purgeAll();
      assertThat(removed).isGreaterThanOrEqualTo(expiredDone.size());
      for (String k : expiredDone) {
        assertThat(admin().inspect(k)).as("expired %s", k).isEmpty();
      }
      for (String k : kept) {
        assertThat(admin().inspect(k)).as("kept %s", k).isPresent();
      }
      assertThatThrownBy(() -> admin().purgeExpired(0))
          .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @DisplayName("fingerprint: the stored fingerprint is returned to later claimers")
    void scenario_fingerprint_is_returned_to_later_claimers() {
      String key = newKey("fingerprint");
      ClaimRequest request = new ClaimRequest(key, LEASE, RETENTION, newToken(), "sha256:aaaa");
      Claim c = won(backend().claim(request));
      ClaimResult held = claim(key);
      assertThat(held).isInstanceOf(ClaimResult.HeldByOther.class);
      assertThat(((ClaimResult.HeldByOther) held).fingerprint()).isEqualTo("sha256:aaaa");
      assertThat(backend().complete(c, TTL)).isTrue();
      ClaimResult done = claim(key);
      assertThat(done).isInstanceOf(ClaimResult.AlreadyDone.class);
      assertThat(((ClaimResult.AlreadyDone) done).fingerprint()).isEqualTo("sha256:aaaa");
      assertThat(record(key).fingerprint()).isEqualTo("sha256:aaaa");
    }

    @Test
    @DisplayName("extend keeps a CLAIMED record's retention past its renewed lease")
    void scenario_extend_moves_the_retention_with_the_lease() {
      String key = newKey("retention");
      Claim c = claimWon(key);
      LockRecord before = record(key);
      assertThat(Duration.between(before.leaseExpiry(), before.expiresAt())).isEqualTo(RETENTION);
      advance(Duration.ofSeconds(10));
      assertThat(backend().extend(c, LEASE)).isTrue();
      LockRecord after = record(key);
      assertThat(Duration.between(after.leaseExpiry(), after.expiresAt())).isEqualTo(RETENTION);
      assertThat(after.expiresAt()).isAfter(before.expiresAt());
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Keys.
  // ---------------------------------------------------------------------------------------------

  @Nested
  @DisplayName("Keys")
  class Keys {

    @Test
    @DisplayName("the backend stores keys of at least 1,024 UTF-8 bytes")
    void keys_limit_is_at_least_1024_bytes() {
      assertThat(backend().maxKeyBytes())
          .isGreaterThanOrEqualTo(LockBackend.MIN_SUPPORTED_KEY_BYTES);
    }

    @Test
    @DisplayName("hostile and unusual keys round-trip unchanged")
    void keys_hostile_and_unusual_round_trip() {
      String base = newKey("k");
      List<String> keys =
          List.of(
              base + " with spaces",
              base + "\nnew\r\nlines\t",
              base + "{braces}{}",
              base + "'; DROP TABLE pubsub_worker_locks; --",
              base + "\"quotes\" and \\backslash\\",
              base + "%_*?[]^$.|+()",
              base + ":colons:and/slashes/",
              base + "üñïçødé-日本語-😀",
              base + "\u0001\u0007\u001f\u007f");
      for (String key : keys) {
        Claim c = claimWon(key);
        assertThat(c.key()).isEqualTo(key);
        assertThat(backend().complete(c, TTL)).isTrue();
        assertThat(record(key).key()).isEqualTo(key);
        assertThat(claim(key)).isInstanceOf(ClaimResult.AlreadyDone.class);
        assertThat(admin().forget(key)).isTrue();
      }
    }

    @Test
    @DisplayName("a key of exactly 1,024 UTF-8 bytes (multi-byte characters) round-trips")
    void keys_of_1024_utf8_bytes_round_trip() {
      String base = newKey("long");
      StringBuilder sb = new StringBuilder(base);
      // 'é' is 2 bytes, '€' 3, '😀' 4: fill to exactly 1,024 bytes.
      String[] parts = {"é", "€", "😀", "a"};
      int i = 0;
      while (utf8(sb.toString()) < 1024) {
        String next = parts[i++ % parts.length];
        if (utf8(sb.toString()) + utf8(next) > 1024) {
          next = "a";
        }
        sb.append(next);
      }
      String key = sb.toString();
      assertThat(utf8(key)).isEqualTo(1024);
      Claim c = claimWon(key);
      assertThat(backend().complete(c, TTL)).isTrue();
      assertThat(record(key).key()).isEqualTo(key);
      assertThat(claim(key)).isInstanceOf(ClaimResult.AlreadyDone.class);
    }

    @Test
    @DisplayName(
        "invalid keys (empty, unpaired surrogate, over the limit) are rejected before any I/O")
    void keys_invalid_are_rejected_before_io() {
      String tooLong = "x".repeat(backend().maxKeyBytes() + 1);
      String loneHigh = newKey("surrogate") + "\uD83D";
      String loneLow = newKey("surrogate") + "\uDE00x";
      Claim someClaim = new Claim("", 1, java.time.Instant.EPOCH, "t");
      assertRejected(() -> backend().claim("", LEASE, newToken()), "empty");
      assertRejected(() -> backend().claim(tooLong, LEASE, newToken()), "limit");
      assertRejected(() -> backend().claim(loneHigh, LEASE, newToken()), "surrogate");
      assertRejected(() -> backend().claim(loneLow, LEASE, newToken()), "surrogate");
      assertRejected(() -> backend().complete(someClaim, TTL), "empty");
      assertRejected(() -> backend().release(someClaim), "empty");
      assertRejected(() -> backend().extend(someClaim, LEASE), "empty");
      assertRejected(() -> admin().inspect(""), "empty");
      assertRejected(() -> admin().forget(tooLong), "limit");
      assertThat(admin().inspect(newKey("surrogate"))).isEmpty();
    }

    private void assertRejected(ThrowableAssert.ThrowingCallable call, String mentions) {
      assertThatThrownBy(call)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining(mentions);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Admin.
  // ---------------------------------------------------------------------------------------------

  @Nested
  @DisplayName("Admin")
  class Admin {

    @Test
    @DisplayName("inspect shows state, fence, lease, expiry, token and the backend's clock")
    void admin_inspect_shows_the_record() {
      String key = newKey("inspect");
      assertThat(admin().inspect(key)).isEmpty();
      Claim c = claimWon(key);
      LockRecord r = record(key);
      assertThat(r.key()).isEqualTo(key);
      assertThat(r.state()).isEqualTo(LockState.CLAIMED);
      assertThat(r.fence()).isEqualTo(c.fence());
      assertThat(r.leaseExpiry()).isEqualTo(c.leaseExpiry());
      assertThat(r.claimToken()).isEqualTo(c.claimToken());
      assertThat(r.observedAt()).isBefore(r.leaseExpiry());
      assertThat(r.reclaimable()).isFalse();
    }

    @Test
    @DisplayName("forget of a key that has no record returns false and changes nothing")
    void admin_forget_of_an_absent_key_is_false() {
      assertThat(admin().forget(newKey("never"))).isFalse();
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Records the backend cannot read, and the top of the fence range.
  // ---------------------------------------------------------------------------------------------

  /**
   * One record the backend must refuse to read, as {@link BackendFixture#writeRawRecord} stores it.
   *
   * @param name what is wrong with it, as the test's display name shows it
   * @param fields its fields, given the backend clock's current time in epoch milliseconds
   */
  public record UnreadableRecord(String name, LongFunction<Map<String, String>> fields) {
    @Override
    public String toString() {
      return name;
    }
  }

  /** The claim token every unreadable record of {@link #unreadableRecords()} carries. */
  protected static final String RAW_TOKEN = "raw-token-1";

  /** The fence every unreadable record of {@link #unreadableRecords()} with a valid one carries. */
  protected static final long RAW_FENCE = 7;

  /**
   * The unreadable records every backend is tried with: unknown, empty and wrongly cased states,
   * fences 0, negative, above {@link LockBackend#MAX_FENCE} up to 2<sup>63</sup> − 1 and not
   * numeric, times out of range or not numeric, malformed claim tokens, and missing fields. Each
   * starts from a record that would be live (a DONE record within its window, or a CLAIMED one
   * whose lease has lapsed, which a lenient backend would silently take over) and breaks one field.
   */
  public static Stream<UnreadableRecord> unreadableRecords() {
    return Stream.of(
        done("unknown state 'X'", f -> f.put("state", "X")),
        done("empty state", f -> f.put("state", "")),
        done("state in lower case ('done')", f -> f.put("state", "done")),
        lapsed("state in mixed case ('Claimed')", f -> f.put("state", "Claimed")),
        done("state with a trailing space ('DONE ')", f -> f.put("state", "DONE ")),
        done("no state", f -> f.remove("state")),
        lapsed("fence 0", f -> f.put("fence", "0")),
        lapsed("negative fence (-5)", f -> f.put("fence", "-5")),
        expired(
            "fence MAX_FENCE + 1", f -> f.put("fence", Long.toString(LockBackend.MAX_FENCE + 1))),
        expired("fence 2^63 - 2", f -> f.put("fence", Long.toString(Long.MAX_VALUE - 1))),
        lapsed("fence 2^63 - 1", f -> f.put("fence", Long.toString(Long.MAX_VALUE))),
        lapsed("non-numeric fence ('abc')", f -> f.put("fence", "abc")),
        lapsed("fence with a leading zero ('07')", f -> f.put("fence", "07")),
        done("no fence", f -> f.remove("fence")),
        lapsed("no leaseExpiry", f -> f.remove("leaseExpiry")),
        lapsed("negative leaseExpiry (-1)", f -> f.put("leaseExpiry", "-1")),
        done("non-numeric expiresAt ('soon')", f -> f.put("expiresAt", "soon")),
        expired("no expiresAt", f -> f.remove("expiresAt")),
        done(
            "expiresAt after MAX_EPOCH_MILLIS",
            f -> f.put("expiresAt", Long.toString(LockBackend.MAX_EPOCH_MILLIS + 1))),
        lapsed("empty claimToken", f -> f.put("claimToken", "")),
        lapsed("claimToken with a space", f -> f.put("claimToken", "raw token")),
        new UnreadableRecord("nothing but a fingerprint", now -> Map.of("fingerprint", "sha:1")));
  }

  /** A DONE record within its window, with one field broken. */
  private static UnreadableRecord done(String name, Consumer<Map<String, String>> breakIt) {
    return raw(name, "DONE", -60_000, 3_600_000, breakIt);
  }

  /** A DONE record past its window, with one field broken. */
  private static UnreadableRecord expired(String name, Consumer<Map<String, String>> breakIt) {
    return raw(name, "DONE", -7_200_000, -3_600_000, breakIt);
  }

  /** A CLAIMED record whose lease has lapsed (reclaimable), with one field broken. */
  private static UnreadableRecord lapsed(String name, Consumer<Map<String, String>> breakIt) {
    return raw(name, "CLAIMED", -60_000, 3_600_000, breakIt);
  }

  private static UnreadableRecord raw(
      String name,
      String state,
      long leaseFromNow,
      long expiresFromNow,
      Consumer<Map<String, String>> breakIt) {
    return new UnreadableRecord(
        name,
        now -> {
          Map<String, String> f = new LinkedHashMap<>();
          f.put("state", state);
          f.put("fence", Long.toString(RAW_FENCE));
          f.put("leaseExpiry", Long.toString(now + leaseFromNow));
          f.put("expiresAt", Long.toString(now + expiresFromNow));
          f.put("claimToken", RAW_TOKEN);
          breakIt.accept(f);
          return f;
        });
  }

  /** A readable record at {@code fence}, as {@link BackendFixture#writeRawRecord} stores it. */
  private static Map<String, String> readable(
      String state, long fence, long leaseExpiry, long expiresAt) {
    Map<String, String> f = new LinkedHashMap<>();
    f.put("state", state);
    f.put("fence", Long.toString(fence));
    f.put("leaseExpiry", Long.toString(leaseExpiry));
    f.put("expiresAt", Long.toString(expiresAt));
    f.put("claimToken", RAW_TOKEN);
    return f;
  }

  @Nested
  @DisplayName("Records the backend cannot read")
  class UnreadableRecords {

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.pubsubworker.testkit.LockBackendContract#unreadableRecords")
    @DisplayName(
        "an unreadable record is a typed error for its key on every verb, changes nothing, and"
            + " forget removes it")
    void unreadable_record_is_a_typed_error_that_changes_nothing(UnreadableRecord junk) {
      String key = newKey("unreadable");
      Map<String, String> fields = junk.fields().apply(nowMillis());
      writeRaw(key, fields);
      Claim plausible =
          new Claim(key, RAW_FENCE, java.time.Instant.ofEpochMilli(nowMillis()), RAW_TOKEN);

      assertUnreadable(() -> claim(key), key);
      assertUnreadable(
          () -> backend().claim(new ClaimRequest(key, LEASE, RETENTION, RAW_TOKEN, null)), key);
      assertUnreadable(() -> backend().complete(plausible, TTL), key);
      assertUnreadable(() -> answer(backend().completeAsync(plausible, TTL)), key);
      assertUnreadable(() -> backend().extend(plausible, LEASE), key);
      assertUnreadable(() -> backend().release(plausible), key);
      assertStoredAsWritten(key, fields);

      // Its windows passing changes nothing: it is never taken over silently.
      advance(Duration.ofHours(3));
      assertUnreadable(() -> claim(key), key);
      AtomicInteger runs = new AtomicInteger();
      try (IdempotencyGuard guard = guard()) {
        assertUnreadable(() -> guard.lock(key, ctx -> runs.incrementAndGet()), key);
        assertUnreadable(() -> guard.mutex(key, ctx -> runs.incrementAndGet()), key);
      }
      assertThat(runs).hasValue(0);
      assertStoredAsWritten(key, fields);

      assertThat(admin().forget(key)).isTrue();
      assertThat(admin().inspect(key)).isEmpty();
      assertThat(claimWon(key).fence()).isEqualTo(1);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("dev.pubsubworker.testkit.LockBackendContract#unreadableRecords")
    @DisplayName("a batch with an unreadable entry settles every other entry as if it were alone")
    void batch_with_an_unreadable_entry_settles_its_batch_mates(UnreadableRecord junk) {
      Assumptions.assumeTrue(
          backend() instanceof BatchLockBackend, "the backend has no batch verbs");
      BatchLockBackend batch = (BatchLockBackend) backend();
      String junkKey = newKey("unreadable-batch");
      String fresh = newKey("batch-fresh");
      String done = newKey("batch-done");
      String held = newKey("batch-held");
      assertThat(backend().complete(claimWon(done), TTL)).isTrue();
      Claim holder = claimWon(held);
      Map<String, String> fields = junk.fields().apply(nowMillis());
      writeRaw(junkKey, fields);

      List<BatchLockBackend.BatchResult<ClaimResult>> claimed =
          batch.claimAll(
              List.of(
                  new ClaimRequest(fresh, LEASE, RETENTION, newToken(), null),
                  new ClaimRequest(junkKey, LEASE, RETENTION, newToken(), null),
                  new ClaimRequest(done, LEASE, RETENTION, newToken(), null),
                  new ClaimRequest(held, LEASE, RETENTION, newToken(), null)));

      Claim freshClaim = won(claimed.get(0).get());
      assertThat(freshClaim.fence()).isEqualTo(1);
      assertUnreadable(() -> claimed.get(1).get(), junkKey);
      assertThat(claimed.get(2).get()).isInstanceOf(ClaimResult.AlreadyDone.class);
      assertThat(claimed.get(3).get()).isInstanceOf(ClaimResult.HeldByOther.class);

      Claim onJunk =
          new Claim(junkKey, RAW_FENCE, java.time.Instant.ofEpochMilli(nowMillis()), RAW_TOKEN);
      List<BatchLockBackend.BatchResult<Boolean>> completed =
          batch.completeAll(
              List.of(
                  new BatchLockBackend.CompleteRequest(freshClaim, TTL),
                  new BatchLockBackend.CompleteRequest(onJunk, TTL),
                  new BatchLockBackend.CompleteRequest(holder, TTL)));
      assertThat(completed.get(0).get()).isTrue();
      assertUnreadable(() -> completed.get(1).get(), junkKey);
      assertThat(completed.get(2).get()).isTrue();
      assertThat(record(fresh).state()).isEqualTo(LockState.DONE);
      assertThat(record(held).state()).isEqualTo(LockState.DONE);
      assertStoredAsWritten(junkKey, fields);
      assertThat(admin().forget(junkKey)).isTrue();
    }

    @Test
    @DisplayName("a DONE record at MAX_FENCE past its window is reclaimed at fence 1")
    void done_record_at_max_fence_is_reclaimed_at_fence_1() {
      String key = newKey("max-fence-done");
      long now = nowMillis();
      writeRaw(key, readable("DONE", LockBackend.MAX_FENCE, now - 7_200_000, now - 3_600_000));
      assertThat(record(key).fence()).isEqualTo(LockBackend.MAX_FENCE);
      Claim c = claimWon(key);
      assertThat(c.fence()).isEqualTo(1);
      assertThat(record(key).fence()).isEqualTo(1);
      assertThat(backend().complete(c, TTL)).isTrue();
      assertThat(claim(key)).isInstanceOf(ClaimResult.AlreadyDone.class);
    }

    @Test
    @DisplayName(
        "a lapsed claim at MAX_FENCE is reclaimed at fence 1, and its holder is fenced out")
    void lapsed_claim_at_max_fence_is_reclaimed_at_fence_1() {
      String key = newKey("max-fence-lapsed");
      long now = nowMillis();
      writeRaw(key, readable("CLAIMED", LockBackend.MAX_FENCE, now - 60_000, now + 3_600_000));
      Claim zombie =
          new Claim(
              key, LockBackend.MAX_FENCE, java.time.Instant.ofEpochMilli(now - 60_000), RAW_TOKEN);
      Claim c = claimWon(key);
      assertThat(c.fence()).isEqualTo(1);
      assertThat(backend().complete(zombie, TTL)).isFalse();
      assertThat(backend().extend(zombie, LEASE)).isFalse();
      backend().release(zombie);
      assertThat(record(key).fence()).isEqualTo(1);
      assertThat(backend().complete(c, TTL)).isTrue();
    }

    @Test
    @DisplayName("release at MAX_FENCE gives fence 1: the key is free at once, the claim is spent")
    void release_at_max_fence_gives_fence_1() {
      String key = newKey("max-fence-release");
      long now = nowMillis();
      writeRaw(key, readable("CLAIMED", LockBackend.MAX_FENCE, now + 60_000, now + 3_600_000));
      Claim held =
          new Claim(
              key, LockBackend.MAX_FENCE, java.time.Instant.ofEpochMilli(now + 60_000), RAW_TOKEN);
      assertThat(claim(key)).isInstanceOf(ClaimResult.HeldByOther.class);
      assertThat(backend().extend(held, LEASE)).isTrue();
      backend().release(held);
      LockRecord r = record(key);
      assertThat(r.state()).isEqualTo(LockState.CLAIMED);
      assertThat(r.fence()).isEqualTo(1);
      assertThat(r.reclaimable()).isTrue();
      assertThat(backend().complete(held, TTL)).isFalse();
      assertThat(claimWon(key).fence()).isEqualTo(2);
    }

    @Test
    @DisplayName("a record one below MAX_FENCE is reclaimed at MAX_FENCE, which completes")
    void record_below_max_fence_is_reclaimed_at_max_fence() {
      String key = newKey("max-fence-below");
      long now = nowMillis();
      writeRaw(key, readable("DONE", LockBackend.MAX_FENCE - 1, now - 7_200_000, now - 3_600_000));
      Claim c = claimWon(key);
      assertThat(c.fence()).isEqualTo(LockBackend.MAX_FENCE);
      assertThat(backend().complete(c, TTL)).isTrue();
      LockRecord r = record(key);
      assertThat(r.state()).isEqualTo(LockState.DONE);
      assertThat(r.fence()).isEqualTo(LockBackend.MAX_FENCE);
    }

    @Test
    @DisplayName(
        "purgeExpired removes an unreadable record once its expiresAt has passed, and only then")
    void purge_removes_an_unreadable_record_only_after_its_expires_at() {
      String key = newKey("unreadable-purge");
      String noExpiry = newKey("unreadable-purge-none");
      long now = nowMillis();
      Map<String, String> fields = readable("X", RAW_FENCE, now - 60_000, now + 60_000);
      writeRaw(key, fields);
      Map<String, String> without = readable("X", RAW_FENCE, now - 60_000, now + 60_000);
      without.remove("expiresAt");
      writeRaw(noExpiry, without);
      purgeAll();
      assertStoredAsWritten(key, fields);
      advance(Duration.ofMinutes(2));
      purgeAll();
      assertThat(admin().inspect(key)).isEmpty();
      assertStoredAsWritten(noExpiry, without);
      assertThat(admin().forget(noExpiry)).isTrue();
    }
  }

  /** The backend clock's current time, read by claiming (and forgetting) a fresh key. */
  protected final long nowMillis() {
    String key = newKey("clock");
    claimWon(key);
    long now = record(key).observedAt().toEpochMilli();
    admin().forget(key);
    return now;
  }

  /** Writes a raw record through the fixture (which may skip the test). */
  protected final void writeRaw(String key, Map<String, String> fields) {
    fixture.writeRawRecord(key, fields);
  }

  /** Asserts that {@code call} throws the unreadable-record error for {@code key}. */
  /**
   * What an asynchronous verb's stage completed with, waiting at most 30 s: its value, or the
   * exception it completed with, thrown as it is.
   */
  protected static <T> T answer(CompletionStage<T> stage) throws Exception {
    try {
      return stage.toCompletableFuture().get(30, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      while (cause instanceof CompletionException && cause.getCause() != null) {
        cause = cause.getCause();
      }
      if (cause instanceof Exception ex) {
        throw ex;
      }
      throw e;
    }
  }

  protected static void assertUnreadable(ThrowableAssert.ThrowingCallable call, String key) {
    assertThatThrownBy(call)
        .isInstanceOfSatisfying(
            InvalidLockRecordException.class,
            e -> {
              assertThat(e.key()).isEqualTo(key);
              assertThat(e.problem()).isNotBlank();
              assertThat(e.getMessage()).contains(e.problem()).doesNotContain(key);
            });
  }

  /** Asserts that inspect shows the key's unreadable record with every field as written. */
  protected final void assertStoredAsWritten(String key, Map<String, String> fields) {
    assertThatThrownBy(() -> admin().inspect(key))
        .isInstanceOfSatisfying(
            InvalidLockRecordException.class,
            e -> {
              assertThat(e.key()).isEqualTo(key);
              assertThat(e.storedFields()).containsAllEntriesOf(fields);
            });
  }

  // ---------------------------------------------------------------------------------------------
  // Helpers.
  // ---------------------------------------------------------------------------------------------

  /** Purges in batches until a batch comes back short; returns how many were removed. */
  protected final int purgeAll() {
    int total = 0;
    int batch = 500;
    int removed;
    do {
      removed = admin().purgeExpired(batch);
      total += removed;
    } while (removed == batch);
    return total;
  }

  private List<ClaimResult> claimConcurrently(String key, int claimers) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(claimers);
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<ClaimResult>> futures = new ArrayList<>();
      for (int i = 0; i < claimers; i++) {
        // Alternate between two backend instances, as claims from two worker processes would.
        LockBackend instance = i % 2 == 0 ? backend() : fixture.secondInstance();
        futures.add(
            pool.submit(
                () -> {
                  start.await();
                  return instance.claim(new ClaimRequest(key, LEASE, RETENTION, newToken(), null));
                }));
      }
      start.countDown();
      // A bound that only catches a hang: a store that resolves conflicting transactions by a lock
      // timeout (the Firestore emulator: 2 s per conflict, retried) needs seconds per claim here,
      // and the claims of one instance may take turns.
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
      List<ClaimResult> results = new ArrayList<>();
      for (Future<ClaimResult> f : futures) {
        results.add(f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
      }
      return results;
    } finally {
      pool.shutdownNow();
    }
  }

  private static int utf8(String s) {
    return s.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
  }
}
