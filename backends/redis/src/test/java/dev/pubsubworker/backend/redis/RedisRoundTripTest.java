package dev.pubsubworker.backend.redis;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;

import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.LockResult;
import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.event.command.CommandStartedEvent;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * One network round trip per verb: counted on the server ({@code INFO commandstats}: one {@code
 * EVALSHA} per verb; no {@code EVAL}, no {@code SCRIPT LOAD}, no transaction) and on the client (a
 * Lettuce command listener sees exactly those commands).
 */
class RedisRoundTripTest {

  private static final Duration LEASE = Duration.ofSeconds(30);
  private static final Duration TTL = Duration.ofMinutes(5);
  private static final int CYCLES = 50;

  // A server of its own: the counts are the server's, and another process's commands on the shared
  // Redis (a benchmark, another build) would land in them.
  private static PrivateRedis redis;

  private final Map<String, LongAdder> sent = new ConcurrentHashMap<>();
  private RedisLockSettings settings;
  private RedisLockBackend backend;
  private TestRedis.Side side;

  @BeforeAll
  static void startServer() {
    redis = PrivateRedis.start();
  }

  @AfterAll
  static void stopServer() {
    redis.close();
  }

  @BeforeEach
  void open() {
    settings = TestRedis.settings("roundtrip").uri(redis.uri()).build();
    backend = RedisLockBackend.create(settings);
    backend.addCommandListener(
        new CommandListener() {
          @Override
          public void commandStarted(CommandStartedEvent event) {
            String type = event.getCommand().getType().toString();
            sent.computeIfAbsent(type, t -> new LongAdder()).increment();
          }
        });
    side = redis.side();
    backend.checkConnection(); // connects and loads the scripts once
  }

  @AfterEach
  void close() {
    backend.close();
    side.deleteAll(settings.namespace());
    side.close();
  }

  @Test
  void every_verb_is_one_evalsha() {
    sent.clear();
    long evalshaBefore = side.commandCalls("evalsha");
    long evalBefore = side.commandCalls("eval");
    long scriptBefore = side.commandCalls("script|load");
    long execBefore = side.commandCalls("exec");

    for (int i = 0; i < CYCLES; i++) {
      String key = "cycle-" + i;
      Claim claim = ((ClaimResult.Won) backend.claim(key, LEASE, "token-" + i)).claim();
      assertThat(backend.extend(claim, LEASE)).isTrue();
      assertThat(backend.complete(claim, TTL)).isTrue();
      assertThat(backend.claim(key, LEASE, "other-" + i))
          .isInstanceOf(ClaimResult.AlreadyDone.class);
      assertThat(backend.inspect(key)).isPresent();
      String mutexKey = "mutex-" + i;
      Claim mutex = ((ClaimResult.Won) backend.claim(mutexKey, LEASE, "m-" + i)).claim();
      assertThat(backend.claim(mutexKey, LEASE, "n-" + i))
          .isInstanceOf(ClaimResult.HeldByOther.class);
      backend.release(mutex);
    }

    // Claims on a new key, on a DONE key and on a held key, extend, complete, inspect and
    // release: one EVALSHA each, eight per cycle.
    long scripts = 8L * CYCLES;
    assertThat(side.commandCalls("evalsha") - evalshaBefore).isEqualTo(scripts);
    assertThat(side.commandCalls("eval") - evalBefore).isZero();
    assertThat(side.commandCalls("script|load") - scriptBefore).isZero();
    assertThat(side.commandCalls("exec") - execBefore).isZero();
    assertThat(sent.keySet()).containsExactly("EVALSHA");
    assertThat(sent.get("EVALSHA").sum()).isEqualTo(scripts);
  }

  @Test
  void a_retried_claim_is_one_evalsha_that_keeps_the_fence() {
    Claim first = ((ClaimResult.Won) backend.claim("retried", LEASE, "token")).claim();
    sent.clear();
    long evalshaBefore = side.commandCalls("evalsha");
    // The same claim token again (a retry after a lost reply): the script re-affirms the claim.
    ClaimResult again = backend.claim("retried", LEASE, "token");
    assertThat(again)
        .isInstanceOfSatisfying(
            ClaimResult.Won.class, w -> assertThat(w.claim().fence()).isEqualTo(first.fence()));
    assertThat(side.commandCalls("evalsha") - evalshaBefore).isEqualTo(1);
    assertThat(sent.keySet()).containsExactly("EVALSHA");
    assertThat(sent.get("EVALSHA").sum()).isEqualTo(1);
  }

  @Test
  void a_guarded_lock_cycle_is_two_round_trips_and_a_duplicate_is_one() {
    try (IdempotencyGuard guard = IdempotencyGuard.newBuilder(backend).lease(LEASE).build()) {
      sent.clear();
      long evalshaBefore = side.commandCalls("evalsha");
      for (int i = 0; i < CYCLES; i++) {
        assertThat(guard.lock("guarded-" + i, ctx -> ctx.fencingToken()).executed()).isTrue();
      }
      // Claim and complete: one EVALSHA each.
      assertThat(side.commandCalls("evalsha") - evalshaBefore).isEqualTo(2L * CYCLES);
      long afterCycles = side.commandCalls("evalsha");
      for (int i = 0; i < CYCLES; i++) {
        assertThat(guard.lock("guarded-" + i, ctx -> ctx.fencingToken()))
            .isInstanceOf(LockResult.Duplicate.class);
      }
      // A duplicate: one EVALSHA.
      assertThat(side.commandCalls("evalsha") - afterCycles).isEqualTo(CYCLES);
      assertThat(sent.keySet()).containsExactly("EVALSHA");
      assertThat(sent.get("EVALSHA").sum()).isEqualTo(3L * CYCLES);
    }
  }

  @Test
  void forget_is_one_del_and_a_purge_over_a_small_prefix_is_one_scan_and_one_script() {
    for (int i = 0; i < 5; i++) {
      backend.claim("p-" + i, LEASE, "t-" + i);
    }
    sent.clear();
    assertThat(backend.forget("p-0")).isTrue();
    assertThat(sent.keySet()).containsExactly("DEL");
    sent.clear();
    assertThat(backend.purgeExpired(100)).isZero();
    // A SCAN walks the whole keyspace 1,000 keys per step; the script runs once per page that has
    // records of this prefix.
    assertThat(sent.get("EVALSHA").sum()).isBetween(1L, sent.get("SCAN").sum());
    assertThat(sent.keySet()).containsOnly("SCAN", "EVALSHA");
  }

  @Test
  void an_asynchronous_complete_is_one_evalsha_and_survives_a_lost_script_cache() throws Exception {
    Claim claim = ((ClaimResult.Won) backend.claim("async", LEASE, "t")).claim();
    side.text().scriptFlush();
    sent.clear();
    long evalBefore = side.commandCalls("eval");
    assertThat(backend.completeAsync(claim, LEASE).toCompletableFuture().get(30, SECONDS)).isTrue();
    // NOSCRIPT, answered on the event loop: the text went once with EVAL, and it is DONE.
    assertThat(side.commandCalls("eval") - evalBefore).isEqualTo(1);
    assertThat(sent.get("EVALSHA").sum()).isEqualTo(1);
    assertThat(sent.get("EVAL").sum()).isEqualTo(1);
    sent.clear();
    assertThat(backend.completeAsync(claim, LEASE).toCompletableFuture().get(30, SECONDS)).isTrue();
    assertThat(sent.get("EVALSHA").sum()).isEqualTo(1);
    assertThat(sent).doesNotContainKey("EVAL");
  }

  @Test
  void a_lost_script_cache_costs_one_eval_then_evalsha_again() {
    backend.claim("after-flush", LEASE, "t");
    side.text().scriptFlush();
    sent.clear();
    long evalBefore = side.commandCalls("eval");
    // A retried claim (same token): its EVALSHA is the first after the flush.
    assertThat(backend.claim("after-flush", LEASE, "t")).isInstanceOf(ClaimResult.Won.class);
    // EVALSHA answered NOSCRIPT, so the text was sent once with EVAL ...
    assertThat(side.commandCalls("eval") - evalBefore).isEqualTo(1);
    assertThat(sent.get("EVALSHA").sum()).isEqualTo(1);
    assertThat(sent.get("EVAL").sum()).isEqualTo(1);
    // ... which cached it again: the next call is a single EVALSHA.
    sent.clear();
    assertThat(backend.claim("after-flush", LEASE, "t")).isInstanceOf(ClaimResult.Won.class);
    assertThat(sent.get("EVALSHA").sum()).isEqualTo(1);
    assertThat(sent).doesNotContainKey("EVAL");
    assertThat(side.commandCalls("eval") - evalBefore).isEqualTo(1);
  }
}
