package dev.pubsubworker.testkit.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import dev.pubsubworker.core.CallOptions;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.Completion;
import dev.pubsubworker.core.FingerprintMismatchException;
import dev.pubsubworker.core.FingerprintPolicy;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.InvalidLockRecordException;
import dev.pubsubworker.core.KeyInProgressException;
import dev.pubsubworker.core.LeaseLostException;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.core.LockResult;
import dev.pubsubworker.core.LockState;
import dev.pubsubworker.core.TransactionalLockBackend;
import dev.pubsubworker.core.WorkContext;
import dev.pubsubworker.testkit.ManualTime;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * Every behaviour of the guard (docs/design.md, "The guard"), on the in-memory store with scripted
 * failures and manual time: outcomes, heartbeat, lease loss, error policy, hooks, fingerprints, key
 * checks, retries, transactional mode.
 */
class IdempotencyGuardTest {

  private static final Duration LEASE = Duration.ofSeconds(30);

  private ManualTime time;
  private ScriptedBackend backend;
  private RecordingListener listener;
  private IdempotencyGuard guard;
  private ExecutorService pool;

  @BeforeEach
  void setUp() {
    time = new ManualTime();
    backend = new ScriptedBackend(time.clock());
    listener = new RecordingListener();
    guard = newGuard(backend, IdempotencyGuard.newBuilder(backend));
    pool = Executors.newCachedThreadPool();
  }

  @AfterEach
  void tearDown() {
    guard.close();
    pool.shutdownNow();
  }

  private IdempotencyGuard newGuard(ScriptedBackend b, IdempotencyGuard.Builder builder) {
    return builder
        .lease(LEASE)
        .ttl(Duration.ofHours(1))
        .clock(time.clock())
        .heartbeatScheduler(time.scheduler())
        .claimRetryBackoff(Duration.ZERO)
        .listener(listener)
        .build();
  }

  /** Starts {@code lock} on another thread with work that blocks until {@code finish} opens. */
  private Future<LockResult<Boolean>> lockBlocking(
      String key,
      CallOptions options,
      CountDownLatch finish,
      AtomicReference<WorkContext> context) {
    Future<LockResult<Boolean>> f =
        pool.submit(
            () ->
                guard.lock(
                    key,
                    options,
                    ctx -> {
                      context.set(ctx);
                      assertThat(finish.await(30, TimeUnit.SECONDS)).isTrue();
                      return ctx.isLeaseLost();
                    }));
    await().atMost(Duration.ofSeconds(10)).until(() -> context.get() != null);
    return f;
  }

  @Nested
  @DisplayName("outcomes")
  class Outcomes {

    @Test
    @DisplayName("lock runs the work once and returns Executed; a redelivery is a Duplicate")
    void lock_runs_once_then_duplicate() {
      AtomicInteger runs = new AtomicInteger();
      LockResult<Long> first = guard.lock("k", ctx -> (long) runs.incrementAndGet());
      LockResult<Long> second = guard.lock("k", ctx -> (long) runs.incrementAndGet());
      assertThat(first).isEqualTo(new LockResult.Executed<>(1L, 1, Completion.COMPLETED));
      assertThat(first.executed()).isTrue();
      assertThat(first.result()).contains(1L);
      assertThat(second).isEqualTo(new LockResult.Duplicate<Long>("k"));
      assertThat(second.result()).isEmpty();
      assertThat(runs).hasValue(1);
      assertThat(listener.without("call:"))
          .containsExactly("claimed:k:1", "completed:k:1", "duplicate:k");
    }

    @Test
    @DisplayName(
        "a live holder elsewhere makes lock throw KeyInProgressException; the work does not run")
    void lock_on_held_key_throws_in_progress() {
      Claim holder = won(backend.claim("k", LEASE, "other-holder"));
      AtomicInteger runs = new AtomicInteger();
      assertThatThrownBy(() -> guard.lock("k", ctx -> runs.incrementAndGet()))
          .isInstanceOfSatisfying(
              KeyInProgressException.class,
              e -> {
                assertThat(e.key()).isEqualTo("k");
                assertThat(e.reason()).isEqualTo(KeyInProgressException.Reason.HELD_BY_OTHER);
                assertThat(e.leaseExpiry()).contains(holder.leaseExpiry());
                assertThat(e.getMessage()).doesNotContain("k ");
              });
      assertThat(runs).hasValue(0);
      assertThat(listener.events).contains("contended:k");
    }

    @Test
    @DisplayName("the work receives key, fencing token, reclaim flag, claim time and lease expiry")
    void work_context_carries_claim_data() {
      AtomicReference<WorkContext> seen = new AtomicReference<>();
      backend.claim("k", LEASE, "crashed-holder"); // a holder that died
      time.advance(LEASE);
      guard.lock(
          "k",
          ctx -> {
            seen.set(ctx);
            assertThat(ctx.key()).isEqualTo("k");
            assertThat(ctx.fencingToken()).isEqualTo(2);
            assertThat(ctx.isReclaim()).isTrue();
            assertThat(ctx.claimedAt()).isEqualTo(time.now());
            assertThat(ctx.leaseExpiry()).isEqualTo(time.now().plus(LEASE));
            assertThat(ctx.isLeaseLost()).isFalse();
            assertThat(ctx.resource(Object.class)).isEmpty();
            ctx.checkLease();
            return null;
          });
      assertThat(seen.get()).isNotNull();
      assertThat(listener.events).contains("claimed:k:2:reclaim");
    }

    @Test
    @DisplayName("a checked exception from the work propagates with its own type, after release")
    void checked_exception_propagates_typed() {
      class SupplierRejected extends Exception {
        private static final long serialVersionUID = 1L;
      }
      SupplierRejected thrown = new SupplierRejected();
      assertThatThrownBy(
              () ->
                  guard.lock(
                      "k",
                      ctx -> {
                        throw thrown;
                      }))
          .isSameAs(thrown);
      assertThat(backend.store.inspect("k").orElseThrow().reclaimable()).isTrue();
    }
  }

  @Nested
  @DisplayName("heartbeat and lease loss")
  class Heartbeat {

    @Test
    @DisplayName("the heartbeat extends every lease/3 and keeps a long job's lease alive")
    void heartbeat_keeps_a_long_jobs_lease_alive() throws Exception {
      CountDownLatch finish = new CountDownLatch(1);
      AtomicReference<WorkContext> ctx = new AtomicReference<>();
      Future<LockResult<Boolean>> job = lockBlocking("job", CallOptions.defaults(), finish, ctx);
      for (int i = 0; i < 9; i++) {
        time.advance(Duration.ofSeconds(10)); // 90 s in all: three leases
      }
      assertThat(backend.extends_).hasValue(9);
      assertThat(backend.claim("job", LEASE, "redelivery"))
          .isInstanceOf(ClaimResult.HeldByOther.class);
      assertThat(ctx.get().leaseExpiry()).isEqualTo(time.now().plus(LEASE));
      finish.countDown();
      LockResult<Boolean> result = job.get(10, TimeUnit.SECONDS);
      assertThat(result).isEqualTo(new LockResult.Executed<>(false, 1, Completion.COMPLETED));
      // The sweep planned for the next due time finds no live claim and plans nothing more.
      time.advance(Duration.ofSeconds(10));
      assertThat(time.pendingTasks()).isZero();
      assertThat(backend.extends_).hasValue(9);
      assertThat(listener.events).contains("extended:job:1");
    }

    @Test
    @DisplayName("with the heartbeat off, nothing is extended")
    void heartbeat_off_extends_nothing() throws Exception {
      CountDownLatch finish = new CountDownLatch(1);
      AtomicReference<WorkContext> ctx = new AtomicReference<>();
      Future<LockResult<Boolean>> job =
          lockBlocking("job", CallOptions.defaults().heartbeat(false), finish, ctx);
      assertThat(time.pendingTasks()).isZero();
      time.advance(LEASE);
      assertThat(ctx.get().isLeaseLost()).isTrue();
      finish.countDown();
      // The lease lapsed but nobody reclaimed: complete still commits.
      assertThat(job.get(10, TimeUnit.SECONDS).executed()).isTrue();
      assertThat(backend.extends_).hasValue(0);
      assertThat(backend.store.inspect("job").orElseThrow().state()).isEqualTo(LockState.DONE);
    }

    @Test
    @DisplayName("an extension that finds the fence stale flips the context to lease-lost")
    void stale_fence_on_extend_flips_the_context_to_lease_lost() throws Exception {
      CountDownLatch finish = new CountDownLatch(1);
      AtomicReference<WorkContext> ctx = new AtomicReference<>();
      Future<LockResult<Boolean>> job = lockBlocking("job", CallOptions.defaults(), finish, ctx);
      backend.extendStale = true;
      time.advance(Duration.ofSeconds(10));
      assertThat(ctx.get().isLeaseLost()).isTrue();
      assertThatThrownBy(ctx.get()::checkLease).isInstanceOf(LeaseLostException.class);
      assertThat(listener.events).contains("lost:job:1:FENCE_STALE");
      // The check planned for the old expiry (an extension was in flight) finds nothing to do.
      time.advance(LEASE);
      assertThat(time.pendingTasks()).isZero();
      assertThat(backend.extends_).as("nothing extends a lost lease").hasValue(1);
      assertThat(listener.events).containsOnlyOnce("lost:job:1:FENCE_STALE");
      finish.countDown();
      LockResult<Boolean> result = job.get(10, TimeUnit.SECONDS);
      assertThat(((LockResult.Executed<Boolean>) result).value()).isTrue();
    }

    @Test
    @DisplayName("an extension that finds the record unreadable flips the context to lease-lost")
    void unreadable_record_on_extend_flips_the_context_to_lease_lost_at_once() throws Exception {
      CountDownLatch finish = new CountDownLatch(1);
      AtomicReference<WorkContext> ctx = new AtomicReference<>();
      Future<LockResult<Boolean>> job = lockBlocking("job", CallOptions.defaults(), finish, ctx);
      backend.extendUnreadable = true;
      time.advance(Duration.ofSeconds(10));
      assertThat(ctx.get().isLeaseLost()).as("at the first extension, not at lease end").isTrue();
      assertThat(backend.extends_).hasValue(1);
      assertThat(listener.events).contains("lost:job:1:FENCE_STALE");
      finish.countDown();
      job.get(10, TimeUnit.SECONDS);
    }

    @Test
    @DisplayName("interrupt-on-lease-loss interrupts the work; the guard releases and rethrows")
    void lease_loss_interrupts_the_work_when_configured() throws Exception {
      CountDownLatch never = new CountDownLatch(1);
      AtomicReference<WorkContext> ctx = new AtomicReference<>();
      Future<Boolean> job =
          pool.submit(
              () -> {
                try {
                  guard.lock(
                      "job",
                      CallOptions.defaults().interruptOnLeaseLoss(true),
                      c -> {
                        ctx.set(c);
                        return never.await(30, TimeUnit.SECONDS);
                      });
                  return false;
                } catch (InterruptedException expected) {
                  // The interrupt was the guard's: it must not leak into the caller's thread.
                  return !Thread.currentThread().isInterrupted();
                }
              });
      await().until(() -> ctx.get() != null);
      backend.extendStale = true;
      time.advance(Duration.ofSeconds(10));
      assertThat(job.get(10, TimeUnit.SECONDS)).isTrue();
      assertThat(backend.releases).hasValue(1);
      assertThat(listener.events).contains("released:job:1:failure");
    }

    @Test
    @DisplayName("extensions failing in the store are retried until the lease is actually gone")
    void store_errors_during_extension_are_retried_until_the_lease_runs_out() throws Exception {
      CountDownLatch finish = new CountDownLatch(1);
      AtomicReference<WorkContext> ctx = new AtomicReference<>();
      Future<LockResult<Boolean>> job = lockBlocking("job", CallOptions.defaults(), finish, ctx);
      backend.extendFails = true;
      for (int s = 1; s < 30; s++) {
        time.advance(Duration.ofSeconds(1));
        assertThat(ctx.get().isLeaseLost()).as("lost after %d s", s).isFalse();
      }
      int attempts = backend.extends_.get();
      assertThat(attempts).isGreaterThan(3);
      time.advance(Duration.ofSeconds(1));
      assertThat(ctx.get().isLeaseLost()).isTrue();
      assertThat(listener.events).contains("lost:job:1:STORE_UNREACHABLE");
      assertThat(time.pendingTasks()).isZero();
      finish.countDown();
      job.get(10, TimeUnit.SECONDS);
    }

    @Test
    @DisplayName("a claim that took most of the lease is extended at once, not after lease/3")
    void a_claim_that_took_most_of_the_lease_is_extended_at_once() throws Exception {
      backend.duringClaim = () -> time.advance(Duration.ofSeconds(25)); // 25 s of a 30 s lease
      CountDownLatch finish = new CountDownLatch(1);
      AtomicReference<WorkContext> ctx = new AtomicReference<>();
      Future<LockResult<Boolean>> job = lockBlocking("job", CallOptions.defaults(), finish, ctx);
      time.advance(Duration.ZERO);
      assertThat(backend.extends_).as("extended as soon as the work started").hasValue(1);
      time.advance(Duration.ofSeconds(6)); // past the claim's own expiry
      assertThat(ctx.get().isLeaseLost()).isFalse();
      assertThat(listener.events).noneMatch(e -> e.startsWith("lost:"));
      finish.countDown();
      assertThat(((LockResult.Executed<Boolean>) job.get(10, TimeUnit.SECONDS)).completion())
          .isEqualTo(Completion.COMPLETED);
    }

    @Test
    @DisplayName("a claim that took the whole lease: lost at once, with a WARN and the event")
    void a_claim_that_took_the_whole_lease_is_lost_before_the_work_starts() throws Exception {
      backend.duringClaim = () -> time.advance(Duration.ofSeconds(31));
      try (LogCapture log = new LogCapture(IdempotencyGuard.class.getPackageName())) {
        AtomicReference<Boolean> interrupted = new AtomicReference<>();
        LockResult<Boolean> result =
            guard.lock(
                "job",
                CallOptions.defaults().interruptOnLeaseLoss(true),
                c -> {
                  interrupted.set(Thread.currentThread().isInterrupted());
                  return c.isLeaseLost();
                });
        assertThat(((LockResult.Executed<Boolean>) result).value()).isTrue();
        assertThat(interrupted.get()).as("interrupt-on-lease-loss applies").isTrue();
        assertThat(Thread.currentThread().isInterrupted())
            .as("the guard's interrupt does not leak")
            .isFalse();
        assertThat(listener.events).contains("lost:job:1:EXPIRED");
        assertThat(backend.extends_).as("too late to extend").hasValue(0);
        assertThat(log.events(Level.WARN))
            .singleElement()
            .extracting(e -> e.getFormattedMessage())
            .asString()
            .startsWith("lease lost for key job (fence 1): it ran out on this worker's clock at ")
            .contains("before the work started: the claim call took 31.0s of the 30.0s lease");
      }
    }

    @Test
    @DisplayName("an extension still waiting for the store when the lease runs out is too late")
    void an_extension_that_outlasts_the_lease_loses_it() throws Exception {
      CountDownLatch finish = new CountDownLatch(1);
      AtomicReference<WorkContext> ctx = new AtomicReference<>();
      Future<LockResult<Boolean>> job = lockBlocking("job", CallOptions.defaults(), finish, ctx);
      // The extension sent at 10 s answers at 35 s, 5 s after the lease ran out.
      backend.duringExtend = () -> time.advance(Duration.ofSeconds(25));
      try (LogCapture log = new LogCapture(IdempotencyGuard.class.getPackageName())) {
        time.advance(Duration.ofSeconds(10));
        assertThat(ctx.get().isLeaseLost()).isTrue();
        assertThat(listener.events).containsOnlyOnce("lost:job:1:EXPIRED");
        assertThat(log.has(Level.WARN, "while its extension was still waiting for the store"))
            .isTrue();
      }
      backend.duringExtend = () -> {};
      time.advance(Duration.ofSeconds(60));
      assertThat(backend.extends_).as("no extension after the loss").hasValue(1);
      assertThat(ctx.get().isLeaseLost()).as("a late answer does not undo the loss").isTrue();
      finish.countDown();
      job.get(10, TimeUnit.SECONDS);
    }

    @Test
    @DisplayName("leases that run out on the clock: one event each, one WARN per 10 s")
    void leases_running_out_on_the_clock_warn_at_most_once_per_interval() throws Exception {
      Duration lease = Duration.ofSeconds(1);
      CallOptions noHeartbeat = CallOptions.defaults().heartbeat(false).lease(lease);
      try (LogCapture log = new LogCapture(IdempotencyGuard.class.getPackageName())) {
        for (String key : List.of("a", "b", "c", "d")) {
          if (key.equals("d")) {
            time.advance(Duration.ofSeconds(10));
          }
          guard.lock(
              key,
              noHeartbeat,
              c -> {
                time.advance(lease.plusMillis(100));
                return c.isLeaseLost() && c.isLeaseLost(); // asked twice, declared once
              });
        }
        assertThat(listener.events)
            .filteredOn(e -> e.endsWith(":EXPIRED"))
            .containsExactly(
                "lost:a:1:EXPIRED", "lost:b:1:EXPIRED", "lost:c:1:EXPIRED", "lost:d:1:EXPIRED");
        List<String> warnings =
            log.events(Level.WARN).stream().map(e -> e.getFormattedMessage()).toList();
        assertThat(warnings).as("a, then d 10 s later; b and c held back").hasSize(2);
        assertThat(warnings.get(0))
            .contains("key a")
            .contains("while the work ran (heartbeat off)")
            .doesNotContain("suppressed");
        assertThat(warnings.get(1))
            .contains("key d")
            .endsWith("(2 similar line(s) suppressed since the last one)");
      }
    }

    @Test
    @DisplayName("a store that recovers before the lease runs out keeps the lease")
    void store_recovering_in_time_keeps_the_lease() throws Exception {
      CountDownLatch finish = new CountDownLatch(1);
      AtomicReference<WorkContext> ctx = new AtomicReference<>();
      Future<LockResult<Boolean>> job = lockBlocking("job", CallOptions.defaults(), finish, ctx);
      backend.extendFails = true;
      time.advance(Duration.ofSeconds(16)); // the 10 s extension and a retry fail
      backend.extendFails = false;
      time.advance(Duration.ofSeconds(4));
      assertThat(ctx.get().isLeaseLost()).isFalse();
      time.advance(Duration.ofSeconds(60));
      assertThat(ctx.get().isLeaseLost()).isFalse();
      finish.countDown();
      assertThat(((LockResult.Executed<Boolean>) job.get(10, TimeUnit.SECONDS)).completion())
          .isEqualTo(Completion.COMPLETED);
    }
  }

  @Nested
  @DisplayName("error policy")
  class ErrorPolicy {

    @Test
    @DisplayName("work throws: the claim is released (reclaimable at once) and the error rethrown")
    void work_throwing_releases_and_rethrows() {
      IllegalStateException boom = new IllegalStateException("supplier down");
      assertThatThrownBy(
              () ->
                  guard.lock(
                      "k",
                      ctx -> {
                        throw boom;
                      }))
          .isSameAs(boom);
      assertThat(backend.store.inspect("k").orElseThrow().fence()).isEqualTo(2);
      assertThat(backend.claim("k", LEASE, "retry")).isInstanceOf(ClaimResult.Won.class);
      assertThat(listener.events).contains("released:k:1:failure");
    }

    @Test
    @DisplayName(
        "work throws and release fails too: the work's error wins, release's is suppressed")
    void release_failure_after_work_failure_is_suppressed() {
      backend.releaseFails = true;
      IllegalStateException boom = new IllegalStateException("supplier down");
      assertThatThrownBy(
              () ->
                  guard.lock(
                      "k",
                      ctx -> {
                        throw boom;
                      }))
          .isSameAs(boom)
          .satisfies(
              e ->
                  assertThat(e.getSuppressed())
                      .hasAtLeastOneElementOfType(LockBackendException.class));
    }

    @Test
    @DisplayName("complete throws after the work: success is reported (COMPLETE_FAILED) and logged")
    void complete_throwing_after_the_work_reports_success_and_logs() {
      backend.completeFails = true;
      AtomicInteger runs = new AtomicInteger();
      try (LogCapture log = new LogCapture(IdempotencyGuard.class)) {
        LockResult<Integer> result = guard.lock("k", ctx -> runs.incrementAndGet());
        assertThat(result).isEqualTo(new LockResult.Executed<>(1, 1, Completion.COMPLETE_FAILED));
        assertThat(log.has(Level.ERROR, "complete failed after the work for key k")).isTrue();
      }
      assertThat(runs).hasValue(1);
      assertThat(listener.events).contains("completeFailed:k:1");
    }

    @Test
    @DisplayName(
        "fenced out at complete: success is reported (FENCED_OUT) with an alertable log line")
    void fenced_out_at_complete_reports_success_with_an_alertable_log() {
      try (LogCapture log = new LogCapture(IdempotencyGuard.class)) {
        LockResult<String> result =
            guard.lock(
                "k",
                CallOptions.defaults().heartbeat(false),
                ctx -> {
                  time.advance(LEASE);
                  won(backend.claim("k", LEASE, "redelivery"));
                  return "sent";
                });
        assertThat(result).isEqualTo(new LockResult.Executed<>("sent", 1, Completion.FENCED_OUT));
        assertThat(log.has(Level.ERROR, "FENCED OUT")).isTrue();
      }
      assertThat(listener.events).contains("fencedOut:k:1");
    }

    @Test
    @DisplayName("an onDuplicate hook that throws is logged and ignored")
    void throwing_on_duplicate_hook_is_ignored() {
      guard.lock("k", ctx -> null);
      try (LogCapture log = new LogCapture(IdempotencyGuard.class)) {
        LockResult<Object> r =
            guard.lock(
                "k",
                CallOptions.defaults()
                    .onDuplicate(
                        key -> {
                          throw new IllegalStateException("hook broke");
                        }),
                ctx -> null);
        assertThat(r).isInstanceOf(LockResult.Duplicate.class);
        assertThat(log.has(Level.WARN, "onDuplicate hook threw")).isTrue();
      }
    }

    @Test
    @DisplayName("the guard-wide onDuplicate hook sees every skipped duplicate")
    void guard_wide_on_duplicate_hook_is_called() {
      List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
      try (IdempotencyGuard g =
          newGuard(backend, IdempotencyGuard.newBuilder(backend).onDuplicate(seen::add))) {
        g.lock("k", ctx -> null);
        g.lock("k", ctx -> null);
        g.lock("k", ctx -> null);
      }
      assertThat(seen).containsExactly("k", "k");
    }

    @Test
    @DisplayName("a listener that throws is logged and ignored")
    void throwing_listener_is_ignored() {
      try (IdempotencyGuard g =
          IdempotencyGuard.newBuilder(backend)
              .clock(time.clock())
              .heartbeatScheduler(time.scheduler())
              .listener(
                  new dev.pubsubworker.core.GuardListener() {
                    @Override
                    public void claimed(String key, long fence, boolean reclaim) {
                      throw new IllegalStateException("metrics broke");
                    }
                  })
              .build()) {
        assertThat(g.lock("k", ctx -> "ran").result()).contains("ran");
      }
    }
  }

  @Nested
  @DisplayName("fingerprints")
  class Fingerprints {

    @Test
    @DisplayName("a different fingerprint on a DONE key is reported, and still a duplicate")
    void mismatch_on_done_key_is_reported() {
      guard.lock("k", CallOptions.defaults().fingerprint("aaa"), ctx -> null);
      try (LogCapture log = new LogCapture(IdempotencyGuard.class)) {
        LockResult<Object> r =
            guard.lock("k", CallOptions.defaults().fingerprint("bbb"), ctx -> null);
        assertThat(r).isInstanceOf(LockResult.Duplicate.class);
        assertThat(log.has(Level.WARN, "differs from the stored one")).isTrue();
      }
      assertThat(listener.events).containsOnlyOnce("fingerprintMismatch:k");
    }

    @Test
    @DisplayName("the same fingerprint, or none on either side, is not a mismatch")
    void same_or_absent_fingerprints_are_not_reported() {
      guard.lock("k", CallOptions.defaults().fingerprint("aaa"), ctx -> null);
      guard.lock("k", CallOptions.defaults().fingerprint("aaa"), ctx -> null);
      guard.lock("k", ctx -> null);
      guard.lock("other", ctx -> null);
      guard.lock("other", CallOptions.defaults().fingerprint("zzz"), ctx -> null);
      assertThat(listener.events).noneMatch(e -> e.startsWith("fingerprintMismatch"));
    }

    @Test
    @DisplayName("with REJECT, a mismatch throws FingerprintMismatchException instead of Duplicate")
    void mismatch_with_reject_policy_throws() {
      guard.lock("k", CallOptions.defaults().fingerprint("aaa"), ctx -> null);
      assertThatThrownBy(
              () ->
                  guard.lock(
                      "k",
                      CallOptions.defaults()
                          .fingerprint("bbb")
                          .fingerprintPolicy(FingerprintPolicy.REJECT),
                      ctx -> null))
          .isInstanceOf(FingerprintMismatchException.class);
    }

    @Test
    @DisplayName("a mismatch against a live holder is reported before the InProgress")
    void mismatch_against_live_holder_is_reported() {
      backend.claim(
          new dev.pubsubworker.core.ClaimRequest("k", LEASE, Duration.ofHours(1), "holder", "aaa"));
      assertThatThrownBy(
              () -> guard.lock("k", CallOptions.defaults().fingerprint("bbb"), ctx -> null))
          .isInstanceOf(KeyInProgressException.class);
      assertThat(listener.events).contains("fingerprintMismatch:k");
    }
  }

  @Nested
  @DisplayName("keys and retries")
  class KeysAndRetries {

    @Test
    @DisplayName("bad keys are rejected before any I/O, with a message naming the problem")
    void bad_keys_are_rejected_before_io() {
      assertThatThrownBy(() -> guard.lock("", ctx -> null))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("empty");
      assertThatThrownBy(() -> guard.mutex("a\uD800b", ctx -> null))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("unpaired surrogate");
      assertThatThrownBy(() -> guard.lock("x".repeat(70_000), ctx -> null))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("limit is 65536 bytes");
      assertThatThrownBy(() -> guard.lock(null, ctx -> null))
          .isInstanceOf(NullPointerException.class);
      assertThat(backend.claims).hasValue(0);
    }

    @Test
    @DisplayName("a claim whose response was lost is retried with the same token and re-affirmed")
    void lost_claim_response_is_retried_with_the_same_token() {
      backend.claimsLosingResponse.set(1);
      AtomicInteger runs = new AtomicInteger();
      LockResult<Long> r = guard.lock("k", ctx -> ctx.fencingToken() + runs.incrementAndGet() * 0);
      assertThat(r).isEqualTo(new LockResult.Executed<>(1L, 1, Completion.COMPLETED));
      assertThat(backend.claims).hasValue(2);
      assertThat(runs).hasValue(1);
      assertThat(listener.events).containsSubsequence("call:CLAIM:failed", "call:CLAIM:ok");
    }

    @Test
    @DisplayName("an unreadable record fails lock and mutex at once, without a retry; nothing runs")
    void unreadable_record_is_not_retried_and_nothing_runs() {
      backend.claimUnreadable = true;
      AtomicInteger runs = new AtomicInteger();
      assertThatThrownBy(() -> guard.lock("k", ctx -> runs.incrementAndGet()))
          .isInstanceOfSatisfying(
              InvalidLockRecordException.class, e -> assertThat(e.key()).isEqualTo("k"));
      assertThat(backend.claims).hasValue(1);
      assertThatThrownBy(() -> guard.mutex("k", ctx -> runs.incrementAndGet()))
          .isInstanceOf(InvalidLockRecordException.class);
      assertThat(backend.claims).hasValue(2);
      assertThat(runs).hasValue(0);
      assertThat(listener.events).doesNotContain("duplicate:k");
    }

    @Test
    @DisplayName("a store that stays down fails the call with LockBackendException; nothing runs")
    void store_down_propagates_after_bounded_retries() {
      backend.claimsFailing.set(10);
      AtomicInteger runs = new AtomicInteger();
      assertThatThrownBy(() -> guard.lock("k", ctx -> runs.incrementAndGet()))
          .isInstanceOf(LockBackendException.class)
          .hasMessageContaining("claim failed");
      assertThat(backend.claims).hasValue(1 + IdempotencyGuard.DEFAULT_CLAIM_RETRIES);
      assertThat(runs).hasValue(0);
      assertThat(backend.store.inspect("k")).isEmpty();
    }

    @Test
    @DisplayName("builder and options reject bad values with what was wrong")
    void bad_settings_are_rejected() {
      assertThatThrownBy(() -> IdempotencyGuard.newBuilder(backend).lease(Duration.ZERO))
          .hasMessage("lease must be >= 1ms, but was PT0S");
      assertThatThrownBy(() -> IdempotencyGuard.newBuilder(backend).claimRetries(-1))
          .hasMessage("claimRetries must be 0..10, but was -1");
      assertThatThrownBy(() -> CallOptions.defaults().ttl(Duration.ofSeconds(-5)))
          .hasMessage("ttl must be >= 1ms, but was PT-5S");
      assertThatThrownBy(() -> IdempotencyGuard.newBuilder(backend).transactional(true))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("needs a TransactionalLockBackend");
      assertThatThrownBy(
              () -> guard.lock("k", CallOptions.defaults().transactional(true), ctx -> null))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("needs a TransactionalLockBackend");
      assertThat(backend.claims).hasValue(0);
    }
  }

  @Nested
  @DisplayName("mutex")
  class Mutex {

    @Test
    @DisplayName("mutex runs every call and always releases; it never marks DONE")
    void mutex_runs_every_call_and_releases() {
      AtomicInteger runs = new AtomicInteger();
      for (int i = 0; i < 3; i++) {
        int run = guard.mutex("po", ctx -> runs.incrementAndGet());
        assertThat(run).isEqualTo(i + 1);
      }
      assertThat(backend.store.inspect("po").orElseThrow().state()).isEqualTo(LockState.CLAIMED);
      assertThat(backend.completes).hasValue(0);
      assertThat(listener.events).contains("released:po:1", "released:po:3", "released:po:5");
    }

    @Test
    @DisplayName("mutex on a DONE key throws InProgress (reason DONE) and never runs")
    void mutex_on_done_key_is_in_progress() {
      guard.lock("po", ctx -> null);
      assertThatThrownBy(() -> guard.mutex("po", ctx -> "ran"))
          .isInstanceOfSatisfying(
              KeyInProgressException.class,
              e -> {
                assertThat(e.reason()).isEqualTo(KeyInProgressException.Reason.DONE);
                assertThat(e.leaseExpiry()).isEmpty();
              });
      assertThat(listener.events).contains("contended:po:done");
    }

    @Test
    @DisplayName("mutex on a held key throws InProgress")
    void mutex_on_held_key_is_in_progress() {
      backend.claim("po", LEASE, "holder");
      assertThatThrownBy(() -> guard.mutex("po", ctx -> "ran"))
          .isInstanceOf(KeyInProgressException.class);
    }

    @Test
    @DisplayName("a release that fails after mutex work succeeded reports success and logs")
    void release_failing_after_mutex_success_reports_success() {
      backend.releaseFails = true;
      try (LogCapture log = new LogCapture(IdempotencyGuard.class)) {
        String applied = guard.mutex("po", ctx -> "applied");
        assertThat(applied).isEqualTo("applied");
        assertThat(log.has(Level.ERROR, "release failed after the mutex work")).isTrue();
      }
    }
  }

  @Nested
  @DisplayName("transactional mode")
  class Transactional {

    /** Runs the body with a resource, then completes in "the same transaction". */
    final class TxBackend extends ScriptedBackend implements TransactionalLockBackend {
      final AtomicInteger transactions = new AtomicInteger();

      TxBackend(Clock clock) {
        super(clock);
      }

      @Override
      public <T> Result<T> runAndComplete(Claim claim, Duration ttl, TransactionBody<T> body)
          throws Exception {
        transactions.incrementAndGet();
        T value = body.run("connection-of-the-transaction");
        return new Result<>(
            value,
            store.complete(claim, ttl)
                ? TransactionOutcome.COMMITTED
                : TransactionOutcome.FENCED_OUT_ROLLED_BACK);
      }
    }

    @Test
    @DisplayName("the work runs inside the backend's transaction and sees its resource")
    void work_runs_in_the_transaction_and_sees_its_resource() {
      TxBackend tx = new TxBackend(time.clock());
      try (IdempotencyGuard g = newGuard(tx, IdempotencyGuard.newBuilder(tx).transactional(true))) {
        LockResult<String> r =
            g.lock(
                "k",
                ctx -> {
                  assertThat(ctx.resource(Integer.class)).isEmpty();
                  return ctx.resource(String.class).orElseThrow();
                });
        assertThat(r)
            .isEqualTo(
                new LockResult.Executed<>(
                    "connection-of-the-transaction", 1, Completion.COMPLETED));
        assertThat(g.lock("k", ctx -> "again")).isInstanceOf(LockResult.Duplicate.class);
      }
      assertThat(tx.transactions).hasValue(1);
      assertThat(tx.completes).hasValue(0);
    }

    @Test
    @DisplayName("fenced out at commit: everything rolled back, reported FENCED_OUT_ROLLED_BACK")
    void fenced_out_at_commit_is_rolled_back() {
      TxBackend tx = new TxBackend(time.clock());
      try (IdempotencyGuard g = newGuard(tx, IdempotencyGuard.newBuilder(tx).heartbeat(false))) {
        LockResult<String> r =
            g.lock(
                "k",
                CallOptions.defaults().transactional(true),
                ctx -> {
                  time.advance(LEASE);
                  won(tx.claim("k", LEASE, "redelivery"));
                  return "written";
                });
        assertThat(((LockResult.Executed<String>) r).completion())
            .isEqualTo(Completion.FENCED_OUT_ROLLED_BACK);
      }
    }

    @Test
    @DisplayName("work throwing in the transaction is rethrown and the claim released")
    void work_throwing_in_the_transaction_is_released() {
      TxBackend tx = new TxBackend(time.clock());
      try (IdempotencyGuard g = newGuard(tx, IdempotencyGuard.newBuilder(tx).transactional(true))) {
        assertThatThrownBy(
                () ->
                    g.lock(
                        "k",
                        ctx -> {
                          throw new IllegalStateException("constraint violated");
                        }))
            .hasMessage("constraint violated");
      }
      assertThat(tx.releases).hasValue(1);
      assertThat(tx.store.inspect("k").orElseThrow().reclaimable()).isTrue();
    }
  }

  @Test
  @DisplayName("closing the guard leaves a scheduler it did not create running")
  void close_leaves_a_foreign_scheduler_running() {
    guard.close();
    assertThat(time.scheduler().isShutdown()).isFalse();
  }

  private static Claim won(ClaimResult r) {
    assertThat(r).isInstanceOf(ClaimResult.Won.class);
    return ((ClaimResult.Won) r).claim();
  }
}
