package dev.pubsubworker.backend.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.KeyInProgressException;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.core.LockResult;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Two worker processes whose JVM clocks disagree by 14 minutes (one 7 minutes slow, one 7 minutes
 * fast) still agree on every lease, because the backend reads no JVM clock: leases are set and
 * judged on Redis {@code TIME}. Each "process" has its own backend (its own connection) and a guard
 * on its own skewed {@link Clock}; the backend takes no clock at all.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedisClockSkewTest {

  private static final Duration LEASE = Duration.ofSeconds(30);
  private static final Duration SKEW = Duration.ofMinutes(7);

  private RedisFixture fixture;
  private TestRedis.Side side;
  private final Clock slow = Clock.offset(Clock.systemUTC(), SKEW.negated());
  private final Clock fast = Clock.offset(Clock.systemUTC(), SKEW);

  @BeforeAll
  void open() {
    fixture = new RedisFixture("skew");
    side = TestRedis.side();
  }

  @AfterAll
  void close() {
    fixture.close();
    side.close();
  }

  private Instant redisNow() {
    List<byte[]> time = side.commands().time();
    long seconds = Long.parseLong(new String(time.get(0)));
    long micros = Long.parseLong(new String(time.get(1)));
    return Instant.ofEpochMilli(seconds * 1000 + micros / 1000);
  }

  @Test
  void skewed_workers_agree_on_the_lease_because_redis_time_decides() throws Exception {
    LockBackend processA = fixture.backend();
    LockBackend processB = fixture.secondInstance();
    String key = "skew-" + System.nanoTime();

    Instant before = redisNow();
    Claim a = ((ClaimResult.Won) processA.claim(key, LEASE, "a")).claim();
    Instant after = redisNow();
    // The lease is Redis TIME + lease, not either JVM's clock + lease.
    assertThat(a.leaseExpiry()).isBetween(before.plus(LEASE), after.plus(LEASE));
    assertThat(Duration.between(slow.instant().plus(LEASE), a.leaseExpiry()).abs())
        .isGreaterThan(SKEW.minusSeconds(5));
    assertThat(Duration.between(fast.instant().plus(LEASE), a.leaseExpiry()).abs())
        .isGreaterThan(SKEW.minusSeconds(5));

    // B (whose clock says the lease lapsed minutes ago) sees A's exact lease as live.
    ClaimResult seenByB = processB.claim(key, LEASE, "b");
    assertThat(seenByB).isInstanceOf(ClaimResult.HeldByOther.class);
    assertThat(((ClaimResult.HeldByOther) seenByB).leaseExpiry()).isEqualTo(a.leaseExpiry());

    // One second short of the lease on the server's clock: still held for both.
    fixture.advanceClock(LEASE.minusSeconds(1));
    assertThat(processB.claim(key, LEASE, "b")).isInstanceOf(ClaimResult.HeldByOther.class);
    assertThat(processA.claim(key, LEASE, "a2")).isInstanceOf(ClaimResult.HeldByOther.class);

    // At the lease on the server's clock: either can take it over, and exactly one does.
    fixture.advanceClock(Duration.ofSeconds(1));
    Claim b = ((ClaimResult.Won) processB.claim(key, LEASE, "b")).claim();
    assertThat(b.fence()).isEqualTo(2);
    assertThat(processA.claim(key, LEASE, "a3")).isInstanceOf(ClaimResult.HeldByOther.class);
    assertThat(processA.complete(a, LEASE)).isFalse();
    assertThat(processB.complete(b, LEASE)).isTrue();
  }

  @Test
  void guards_on_skewed_clocks_exclude_each_other_and_dedupe() throws Exception {
    String key = "skew-guard-" + System.nanoTime();
    CountDownLatch inWork = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try (IdempotencyGuard guardA =
            IdempotencyGuard.newBuilder(fixture.backend()).clock(slow).lease(LEASE).build();
        IdempotencyGuard guardB =
            IdempotencyGuard.newBuilder(fixture.secondInstance())
                .clock(fast)
                .lease(LEASE)
                .build()) {
      Future<LockResult<Instant>> holder =
          pool.submit(
              () ->
                  guardA.lock(
                      key,
                      ctx -> {
                        inWork.countDown();
                        assertThat(finish.await(30, TimeUnit.SECONDS)).isTrue();
                        return ctx.leaseExpiry();
                      }));
      assertThat(inWork.await(30, TimeUnit.SECONDS)).isTrue();
      Instant leaseOfA = fixture.admin().inspect(key).orElseThrow().leaseExpiry();
      assertThatThrownBy(() -> guardB.lock(key, ctx -> "ran on B"))
          .isInstanceOfSatisfying(
              KeyInProgressException.class, e -> assertThat(e.leaseExpiry()).contains(leaseOfA));
      finish.countDown();
      assertThat(holder.get(30, TimeUnit.SECONDS).executed()).isTrue();
      assertThat(guardB.lock(key, ctx -> "ran on B")).isInstanceOf(LockResult.Duplicate.class);
    } finally {
      pool.shutdownNow();
    }
  }
}
