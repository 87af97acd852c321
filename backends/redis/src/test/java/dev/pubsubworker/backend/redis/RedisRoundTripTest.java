package dev.pubsubworker.backend.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.LockResult;
import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.event.command.CommandStartedEvent;
import java.time.Duration;
import java.util.List;
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
 * EVALSHA} per verb, no {@code EVAL}, no {@code SCRIPT LOAD}) and on the client (a Lettuce command
 * listener sees exactly one command per verb).
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
  void every_verb_is_exactly_one_evalsha() {
    sent.clear();
    long evalshaBefore = side.commandCalls("evalsha");
    long evalBefore = side.commandCalls("eval");
    long scriptBefore = side.commandCalls("script|load");

    int verbs = 0;
    for (int i = 0; i < CYCLES; i++) {
      String key = "cycle-" + i;
      Claim claim = ((ClaimResult.Won) backend.claim(key, LEASE, "token-" + i)).claim();
      assertThat(backend.extend(claim, LEASE)).isTrue();
      assertThat(backend.complete(claim, TTL)).isTrue();
      assertThat(backend.claim(key, LEASE, "other-" + i))
          .isInstanceOf(ClaimResult.AlreadyDone.class);
      assertThat(backend.inspect(key)).isPresent();
      String mutexKey = "mutex-" + i;
      backend.release(((ClaimResult.Won) backend.claim(mutexKey, LEASE, "m-" + i)).claim());
      verbs += 7;
    }

    assertThat(side.commandCalls("evalsha") - evalshaBefore).isEqualTo(verbs);
    assertThat(side.commandCalls("eval") - evalBefore).isZero();
    assertThat(side.commandCalls("script|load") - scriptBefore).isZero();
    assertThat(sent.keySet()).containsExactly("EVALSHA");
    assertThat(sent.get("EVALSHA").sum()).isEqualTo(verbs);
  }

  @Test
  void a_guarded_lock_cycle_is_two_round_trips_and_a_duplicate_is_one() {
    try (IdempotencyGuard guard = IdempotencyGuard.newBuilder(backend).lease(LEASE).build()) {
      sent.clear();
      long evalshaBefore = side.commandCalls("evalsha");
      for (int i = 0; i < CYCLES; i++) {
        assertThat(guard.lock("guarded-" + i, ctx -> ctx.fencingToken()).executed()).isTrue();
      }
      assertThat(side.commandCalls("evalsha") - evalshaBefore).isEqualTo(2L * CYCLES);
      long afterCycles = side.commandCalls("evalsha");
      for (int i = 0; i < CYCLES; i++) {
        assertThat(guard.lock("guarded-" + i, ctx -> ctx.fencingToken()))
            .isInstanceOf(LockResult.Duplicate.class);
      }
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
  void a_lost_script_cache_costs_one_eval_then_evalsha_again() {
    side.text().scriptFlush();
    sent.clear();
    long evalBefore = side.commandCalls("eval");
    assertThat(backend.claim("after-flush", LEASE, "t")).isInstanceOf(ClaimResult.Won.class);
    // EVALSHA answered NOSCRIPT, so the text was sent once with EVAL ...
    assertThat(side.commandCalls("eval") - evalBefore).isEqualTo(1);
    assertThat(sent.get("EVALSHA").sum()).isEqualTo(1);
    assertThat(sent.get("EVAL").sum()).isEqualTo(1);
    // ... which cached it again: the next call is a single EVALSHA.
    sent.clear();
    assertThat(backend.claim("after-flush", LEASE, "t")).isInstanceOf(ClaimResult.Won.class);
    assertThat(sent.keySet()).containsExactly("EVALSHA");
    assertThat(List.copyOf(sent.values()).get(0).sum()).isEqualTo(1);
    assertThat(side.commandCalls("eval") - evalBefore).isEqualTo(1);
  }
}
