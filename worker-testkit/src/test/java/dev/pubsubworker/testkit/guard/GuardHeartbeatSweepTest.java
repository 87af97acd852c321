package dev.pubsubworker.testkit.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.pubsubworker.core.CallOptions;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.Completion;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.LockResult;
import dev.pubsubworker.core.WorkContext;
import dev.pubsubworker.testkit.ManualTime;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The heartbeat as one sweep over live claims: short calls schedule nothing per call, claims with
 * different leases are each extended on their own lease/3, and the key's log form is computed only
 * for a line that is written.
 */
class GuardHeartbeatSweepTest {

  private static final Duration LEASE = Duration.ofSeconds(30);

  private ManualTime time;
  private ScriptedBackend backend;
  private RecordingListener listener;
  private AtomicInteger formats;
  private IdempotencyGuard guard;
  private ExecutorService pool;

  @BeforeEach
  void setUp() {
    time = new ManualTime();
    backend = new ScriptedBackend(time.clock());
    listener = new RecordingListener();
    formats = new AtomicInteger();
    guard =
        IdempotencyGuard.newBuilder(backend)
            .lease(LEASE)
            .clock(time.clock())
            .heartbeatScheduler(time.scheduler())
            .claimRetryBackoff(Duration.ZERO)
            .keyLogFormat(
                k -> {
                  formats.incrementAndGet();
                  return "hashed";
                })
            .listener(listener)
            .build();
    pool = Executors.newCachedThreadPool();
  }

  @AfterEach
  void tearDown() {
    guard.close();
    pool.shutdownNow();
  }

  @Test
  void short_calls_share_one_planned_sweep_and_leave_nothing_behind() {
    for (int i = 0; i < 100; i++) {
      assertThat(guard.lock("k" + i, ctx -> 1).executed()).isTrue();
      assertThat(time.pendingTasks()).as("after call %d", i).isLessThanOrEqualTo(1);
    }
    time.advance(LEASE);
    assertThat(time.pendingTasks()).isZero();
    assertThat(backend.extends_).hasValue(0);
    // Nothing was logged, so the key format never ran.
    assertThat(formats).hasValue(0);
  }

  @Test
  void claims_with_different_leases_are_each_extended_on_their_own_interval() throws Exception {
    CountDownLatch finish = new CountDownLatch(1);
    AtomicReference<WorkContext> longCtx = new AtomicReference<>();
    AtomicReference<WorkContext> shortCtx = new AtomicReference<>();
    Future<LockResult<Boolean>> longJob = start("long", CallOptions.defaults(), finish, longCtx);
    Future<LockResult<Boolean>> shortJob =
        start("short", CallOptions.defaults().lease(Duration.ofSeconds(3)), finish, shortCtx);
    for (int s = 0; s < 30; s++) {
      time.advance(Duration.ofSeconds(1));
    }
    // 30 s: the 30 s lease every 10 s (3 times), the 3 s lease every 1 s (30 times).
    assertThat(listener.events.stream().filter(e -> e.equals("extended:long:1"))).hasSize(3);
    assertThat(listener.events.stream().filter(e -> e.equals("extended:short:1"))).hasSize(30);
    assertThat(longCtx.get().isLeaseLost()).isFalse();
    assertThat(shortCtx.get().isLeaseLost()).isFalse();
    assertThat(backend.claim("short", LEASE, "other")).isInstanceOf(ClaimResult.HeldByOther.class);
    finish.countDown();
    assertThat(((LockResult.Executed<Boolean>) longJob.get(10, TimeUnit.SECONDS)).completion())
        .isEqualTo(Completion.COMPLETED);
    assertThat(((LockResult.Executed<Boolean>) shortJob.get(10, TimeUnit.SECONDS)).completion())
        .isEqualTo(Completion.COMPLETED);
    time.advance(LEASE);
    assertThat(time.pendingTasks()).isZero();
  }

  @Test
  void a_lost_lease_of_one_claim_leaves_the_others_extended() throws Exception {
    CountDownLatch finish = new CountDownLatch(1);
    AtomicReference<WorkContext> a = new AtomicReference<>();
    AtomicReference<WorkContext> b = new AtomicReference<>();
    Future<LockResult<Boolean>> jobA = start("a", CallOptions.defaults(), finish, a);
    Future<LockResult<Boolean>> jobB = start("b", CallOptions.defaults(), finish, b);
    // Another claim takes "a" (its record is released behind the guard's back and reclaimed).
    backend.store.release(new dev.pubsubworker.core.Claim("a", 1, time.now(), "x"));
    assertThat(backend.claim("a", LEASE, "thief")).isInstanceOf(ClaimResult.Won.class);
    time.advance(Duration.ofSeconds(10));
    assertThat(a.get().isLeaseLost()).isTrue();
    assertThat(listener.events).contains("lost:a:1:FENCE_STALE");
    time.advance(Duration.ofSeconds(50));
    assertThat(b.get().isLeaseLost()).isFalse();
    assertThat(listener.events.stream().filter(e -> e.equals("extended:b:1"))).hasSize(6);
    // The lease-loss line was written once, with the key formatted once.
    assertThat(formats).hasValue(1);
    finish.countDown();
    assertThat(((LockResult.Executed<Boolean>) jobA.get(10, TimeUnit.SECONDS)).completion())
        .isEqualTo(Completion.FENCED_OUT);
    assertThat(((LockResult.Executed<Boolean>) jobB.get(10, TimeUnit.SECONDS)).completion())
        .isEqualTo(Completion.COMPLETED);
  }

  private Future<LockResult<Boolean>> start(
      String key, CallOptions options, CountDownLatch finish, AtomicReference<WorkContext> ctx) {
    Future<LockResult<Boolean>> f =
        pool.submit(
            () ->
                guard.lock(
                    key,
                    options,
                    c -> {
                      ctx.set(c);
                      assertThat(finish.await(30, TimeUnit.SECONDS)).isTrue();
                      return c.isLeaseLost();
                    }));
    await().atMost(Duration.ofSeconds(10)).until(() -> ctx.get() != null);
    return f;
  }
}
