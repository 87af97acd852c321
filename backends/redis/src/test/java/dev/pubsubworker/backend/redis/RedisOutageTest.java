package dev.pubsubworker.backend.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.InvalidLockRecordException;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.core.LockResult;
import io.lettuce.core.KillArgs;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisConnectionException;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.assertj.core.api.ThrowableAssert;
import org.junit.jupiter.api.Test;

/**
 * A store that is down, unreachable, slow, read-only or refusing: every verb fails with a {@link
 * LockBackendException} naming the verb and the prefix (never the key), the guard rethrows it so
 * the delivery would be nacked, and nothing is marked DONE.
 */
class RedisOutageTest {

  private static final Duration LEASE = Duration.ofSeconds(30);
  private static final String SECRET_KEY = "customer-4711/card-4242424242424242";

  @Test
  void closed_port_fails_every_verb_with_a_lock_backend_exception() throws IOException {
    String prefix = TestRedis.uniquePrefix("closed");
    RedisLockSettings settings =
        RedisLockSettings.newBuilder()
            .uri("redis://127.0.0.1:" + closedPort())
            .keyPrefix(prefix)
            .connectTimeout(Duration.ofSeconds(1))
            .commandTimeout(Duration.ofSeconds(1))
            .build();
    try (RedisLockBackend backend = RedisLockBackend.create(settings)) {
      Claim claim = new Claim(SECRET_KEY, 1, Instant.now(), "token");
      assertOutage(() -> backend.claim(SECRET_KEY, LEASE, "token"), "claim", prefix);
      assertOutage(() -> backend.complete(claim, LEASE), "complete", prefix);
      assertOutage(() -> answer(backend.completeAsync(claim, LEASE)), "complete", prefix);
      assertOutage(() -> backend.release(claim), "release", prefix);
      assertOutage(() -> backend.extend(claim, LEASE), "extend", prefix);
      assertOutage(() -> backend.inspect(SECRET_KEY), "inspect", prefix);
      assertOutage(() -> backend.forget(SECRET_KEY), "forget", prefix);
      assertOutage(() -> backend.purgeExpired(10), "purgeExpired", prefix);
      assertOutage(backend::checkConnection, "checkConnection", prefix);
      assertThatThrownBy(() -> backend.claim(SECRET_KEY, LEASE, "token"))
          .hasMessageContaining("cannot connect")
          .hasRootCauseInstanceOf(java.net.ConnectException.class)
          .cause()
          .isInstanceOf(RedisConnectionException.class);
    }
  }

  @Test
  void closed_port_through_the_guard_throws_so_the_delivery_is_nacked_and_the_work_never_runs()
      throws IOException {
    RedisLockSettings settings =
        RedisLockSettings.newBuilder()
            .uri("redis://127.0.0.1:" + closedPort())
            .keyPrefix(TestRedis.uniquePrefix("closed_guard"))
            .connectTimeout(Duration.ofSeconds(1))
            .commandTimeout(Duration.ofSeconds(1))
            .build();
    AtomicInteger runs = new AtomicInteger();
    try (RedisLockBackend backend = RedisLockBackend.create(settings);
        IdempotencyGuard guard =
            IdempotencyGuard.newBuilder(backend).claimRetryBackoff(Duration.ofMillis(10)).build()) {
      assertThatThrownBy(() -> guard.lock(SECRET_KEY, ctx -> runs.incrementAndGet()))
          .isInstanceOf(LockBackendException.class)
          .hasMessageStartingWith("claim failed on redis prefix");
      assertThatThrownBy(() -> guard.mutex(SECRET_KEY, ctx -> runs.incrementAndGet()))
          .isInstanceOf(LockBackendException.class);
    }
    assertThat(runs).hasValue(0);
  }

  @Test
  void invalid_keys_are_rejected_before_any_io_even_when_redis_is_unreachable() throws IOException {
    RedisLockSettings settings =
        RedisLockSettings.newBuilder()
            .uri("redis://127.0.0.1:" + closedPort())
            .connectTimeout(Duration.ofSeconds(1))
            .commandTimeout(Duration.ofSeconds(1))
            .build();
    try (RedisLockBackend backend = RedisLockBackend.create(settings)) {
      String tooLong = "k".repeat(RedisLockBackend.MAX_KEY_BYTES + 1);
      String lone = "half a pair \uD83D";
      Claim empty = new Claim("", 1, Instant.now(), "t");
      Claim longClaim = new Claim(tooLong, 1, Instant.now(), "t");
      for (ThrowableAssert.ThrowingCallable call :
          Arrays.<ThrowableAssert.ThrowingCallable>asList(
              () -> backend.claim("", LEASE, "t"),
              () -> backend.claim(tooLong, LEASE, "t"),
              () -> backend.claim(lone, LEASE, "t"),
              () -> backend.complete(empty, LEASE),
              () -> backend.release(longClaim),
              () -> backend.extend(empty, LEASE),
              () -> backend.inspect(lone),
              () -> backend.forget(tooLong),
              () -> backend.purgeExpired(0))) {
        assertThatThrownBy(call)
            .isInstanceOf(IllegalArgumentException.class)
            .satisfies(e -> assertThat(e.getMessage()).doesNotContain("half a pair"));
      }
      assertThatThrownBy(() -> backend.claim(tooLong, LEASE, "t"))
          .hasMessageContaining("8193 UTF-8 bytes")
          .hasMessageContaining("limit is 8192");
      // A valid key does reach the (unreachable) store.
      assertThatThrownBy(() -> backend.claim("valid", LEASE, "t"))
          .isInstanceOf(LockBackendException.class);
    }
  }

  @Test
  void client_kill_of_the_connection_mid_claim_fails_the_claim_and_nothing_is_written() {
    String name = "pwtest-kill-" + UUID.randomUUID().toString().substring(0, 8);
    RedisLockSettings settings = TestRedis.settings("kill").clientName(name).build();
    String key = "order-" + UUID.randomUUID();
    try (RedisLockBackend backend = RedisLockBackend.create(settings);
        TestRedis.Side side = TestRedis.side()) {
      backend.checkConnection();
      CompletableFuture<ClaimResult> inFlight =
          killWhileInFlight(side, name, () -> backend.claim(key, LEASE, "token-1"));
      assertThat(inFlight)
          .failsWithin(Duration.ofSeconds(10))
          .withThrowableThat()
          .havingCause()
          .isInstanceOf(LockBackendException.class)
          .withMessageStartingWith("claim failed on redis prefix '" + settings.keyPrefix() + "'")
          .withMessageContaining("the connection failed (")
          .withMessageNotContaining(key);
      // The killed command never ran; the driver reconnects by itself and the backend recovers.
      assertThat(side.commands().exists(layout(settings).redisKey(key))).isZero();
      await()
          .atMost(Duration.ofSeconds(10))
          .ignoreException(LockBackendException.class)
          .until(() -> backend.claim(key, LEASE, "token-2") instanceof ClaimResult.Won);
      assertThat(backend.inspect(key)).map(r -> r.fence()).contains(1L);
      side.deleteAll(settings.namespace());
    }
  }

  @Test
  void client_kill_through_the_guard_throws_so_the_delivery_is_nacked_and_nothing_is_done() {
    String name = "pwtest-kill-guard-" + UUID.randomUUID().toString().substring(0, 8);
    RedisLockSettings settings = TestRedis.settings("kill_guard").clientName(name).build();
    String key = "order-" + UUID.randomUUID();
    AtomicInteger runs = new AtomicInteger();
    try (RedisLockBackend backend = RedisLockBackend.create(settings);
        IdempotencyGuard guard = IdempotencyGuard.newBuilder(backend).claimRetries(0).build();
        TestRedis.Side side = TestRedis.side()) {
      backend.checkConnection();
      CompletableFuture<LockResult<Integer>> inFlight =
          killWhileInFlight(side, name, () -> guard.lock(key, ctx -> runs.incrementAndGet()));
      assertThat(inFlight)
          .failsWithin(Duration.ofSeconds(10))
          .withThrowableThat()
          .havingCause()
          .isInstanceOf(LockBackendException.class);
      assertThat(runs).hasValue(0);
      await()
          .atMost(Duration.ofSeconds(10))
          .ignoreException(LockBackendException.class)
          .until(() -> backend.inspect(key), Optional::isEmpty);
      side.deleteAll(settings.namespace());
    }
  }

  @Test
  void a_command_timeout_is_a_lock_backend_exception_naming_the_timeout() {
    RedisLockSettings settings =
        TestRedis.settings("timeout").commandTimeout(Duration.ofMillis(200)).build();
    String key = "order-" + UUID.randomUUID();
    try (RedisLockBackend backend = RedisLockBackend.create(settings);
        TestRedis.Side side = TestRedis.side()) {
      backend.checkConnection();
      side.call("CLIENT", "PAUSE", "1500", "WRITE");
      try {
        assertThatThrownBy(() -> backend.claim(key, LEASE, "token"))
            .isInstanceOf(LockBackendException.class)
            .hasMessage(
                "claim failed on redis prefix '"
                    + settings.keyPrefix()
                    + "' at "
                    + settings.endpoint()
                    + ": no reply within the command timeout of"
                    + " PT0.2S")
            .cause()
            .isInstanceOf(RedisCommandTimeoutException.class);
        // The asynchronous complete is bounded by the same timeout: its stage fails, it never
        // hangs.
        Claim claim = new Claim(key, 1, Instant.now(), "token");
        assertThatThrownBy(() -> answer(backend.completeAsync(claim, LEASE)))
            .isInstanceOf(LockBackendException.class)
            .hasMessageContaining("complete failed on redis prefix")
            .hasMessageEndingWith("no reply within the command timeout of PT0.2S");
      } finally {
        side.call("CLIENT", "UNPAUSE");
      }
      side.deleteAll(settings.namespace());
    }
  }

  /** What an asynchronous verb's stage completed with, its failure thrown as it is. */
  private static <T> T answer(java.util.concurrent.CompletionStage<T> stage) throws Exception {
    try {
      return stage.toCompletableFuture().get(30, java.util.concurrent.TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      Throwable cause = e.getCause();
      while (cause instanceof java.util.concurrent.CompletionException
          && cause.getCause() != null) {
        cause = cause.getCause();
      }
      throw cause instanceof Exception ex ? ex : e;
    }
  }

  @Test
  void a_key_holding_another_type_is_an_unreadable_record_that_forget_removes() {
    RedisLockSettings settings = TestRedis.settings("wrongtype").build();
    try (RedisLockBackend backend = RedisLockBackend.create(settings);
        TestRedis.Side side = TestRedis.side()) {
      // Something else wrote a list where a record belongs.
      side.commands()
          .rpush(
              layout(settings).redisKey(SECRET_KEY),
              "not a record".getBytes(StandardCharsets.UTF_8));
      Claim claim = new Claim(SECRET_KEY, 1, Instant.now(), "token");
      for (ThrowableAssert.ThrowingCallable call :
          Arrays.<ThrowableAssert.ThrowingCallable>asList(
              () -> backend.claim(SECRET_KEY, LEASE, "token"),
              () -> backend.complete(claim, LEASE),
              () -> answer(backend.completeAsync(claim, LEASE)),
              () -> backend.extend(claim, LEASE),
              () -> backend.release(claim),
              () -> backend.inspect(SECRET_KEY))) {
        assertThatThrownBy(call)
            .isInstanceOfSatisfying(
                InvalidLockRecordException.class,
                e -> {
                  assertThat(e.key()).isEqualTo(SECRET_KEY);
                  assertThat(e.storedFields()).isEqualTo(Map.of("(type)", "list"));
                })
            .hasMessageContaining("failed on redis prefix '" + settings.keyPrefix() + "'")
            .hasMessageContaining("(the Redis key holds a list, not a lock record)")
            .satisfies(e -> assertThat(e.getMessage()).doesNotContain("4242"));
      }
      // purgeExpired skips what is not a record instead of failing; forget removes it.
      assertThat(backend.purgeExpired(10)).isZero();
      assertThat(backend.forget(SECRET_KEY)).isTrue();
      assertThat(backend.inspect(SECRET_KEY)).isEmpty();
      side.deleteAll(settings.namespace());
    }
  }

  @Test
  void a_string_that_is_not_a_record_is_unreadable_on_every_verb_and_left_as_it_is() {
    RedisLockSettings settings = TestRedis.settings("foreign_string").build();
    // Not this backend's format; the format without the Redis expiry it always sets; a token with
    // a control character; a fence of 0.
    List<String> values =
        List.of("not a record", "CLAIMED 1 60000 t", "DONE 1 60000 t\u0001", "DONE 0 60000 t");
    try (RedisLockBackend backend = RedisLockBackend.create(settings);
        TestRedis.Side side = TestRedis.side()) {
      byte[] redisKey = layout(settings).redisKey(SECRET_KEY);
      for (int i = 0; i < values.size(); i++) {
        String value = values.get(i);
        byte[] stored = value.getBytes(StandardCharsets.UTF_8);
        side.commands().set(redisKey, stored);
        if (i > 1) {
          side.commands().pexpire(redisKey, 600_000);
        }
        Claim claim = new Claim(SECRET_KEY, 1, Instant.now(), "t");
        for (ThrowableAssert.ThrowingCallable call :
            Arrays.<ThrowableAssert.ThrowingCallable>asList(
                () -> backend.claim(SECRET_KEY, LEASE, "t"),
                () -> backend.claim(SECRET_KEY, LEASE, "other"),
                () -> backend.complete(claim, LEASE),
                () -> backend.extend(claim, LEASE),
                () -> backend.release(claim),
                () -> backend.inspect(SECRET_KEY))) {
          assertThatThrownBy(call)
              .as(value)
              .isInstanceOfSatisfying(
                  InvalidLockRecordException.class,
                  e -> {
                    assertThat(e.key()).isEqualTo(SECRET_KEY);
                    assertThat(e.storedFields()).containsEntry("value", value);
                  })
              .hasMessageContaining("failed on redis prefix '" + settings.keyPrefix() + "'")
              .hasMessageContaining("the Redis key holds a string that is not a lock record")
              .satisfies(e -> assertThat(e.getMessage()).doesNotContain("4242"));
        }
        assertThat(side.commands().get(redisKey)).as(value).isEqualTo(stored);
      }
      assertThat(backend.forget(SECRET_KEY)).isTrue();
      side.deleteAll(settings.namespace());
    }
  }

  @Test
  void a_read_only_replica_is_a_lock_backend_exception_naming_readonly() throws Exception {
    // A replica whose primary is unreachable: it serves reads and refuses every write.
    String binary = LocalRedisCluster.requireRedisServer();
    int port = LocalRedisCluster.freePortPair();
    Process replica =
        new ProcessBuilder(
                binary,
                "--port",
                Integer.toString(port),
                "--bind",
                "127.0.0.1",
                "--replicaof",
                "127.0.0.1",
                Integer.toString(closedPort()),
                "--save",
                "",
                "--appendonly",
                "no")
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
    try {
      RedisLockSettings settings =
          RedisLockSettings.newBuilder()
              .uri("redis://127.0.0.1:" + port)
              .keyPrefix(TestRedis.uniquePrefix("replica"))
              .build();
      try (RedisLockBackend backend = RedisLockBackend.create(settings)) {
        await()
            .atMost(Duration.ofSeconds(20))
            .ignoreExceptions()
            .untilAsserted(backend::checkConnection);
        assertThatThrownBy(() -> backend.claim(SECRET_KEY, LEASE, "token"))
            .isInstanceOf(LockBackendException.class)
            .hasMessageStartingWith("claim failed on redis prefix '" + settings.keyPrefix() + "'")
            .hasMessageContaining("the server refused the command (READONLY")
            .satisfies(e -> assertThat(e.getMessage()).doesNotContain("4242"));
        assertThat(backend.inspect(SECRET_KEY)).isEmpty();
      }
    } finally {
      replica.destroy();
      replica.waitFor(10, java.util.concurrent.TimeUnit.SECONDS);
    }
  }

  private static KeyLayout layout(RedisLockSettings settings) {
    return new KeyLayout(settings.namespace());
  }

  /**
   * Runs {@code call} on another thread while Redis holds write commands ({@code CLIENT PAUSE
   * WRITE}), waits until the backend's connection is parked on it, and kills that connection.
   */
  private static <T> CompletableFuture<T> killWhileInFlight(
      TestRedis.Side side, String clientName, Supplier<T> call) {
    side.call("CLIENT", "PAUSE", "10000", "WRITE");
    try {
      CompletableFuture<T> result = CompletableFuture.supplyAsync(call);
      long id =
          await()
              .atMost(Duration.ofSeconds(5))
              .until(() -> side.parkedClient(clientName), Optional::isPresent)
              .orElseThrow();
      assertThat(side.commands().clientKill(KillArgs.Builder.id(id))).isEqualTo(1);
      return result;
    } finally {
      side.call("CLIENT", "UNPAUSE");
    }
  }

  private static void assertOutage(
      ThrowableAssert.ThrowingCallable call, String verb, String prefix) {
    assertThatThrownBy(call)
        .isInstanceOf(LockBackendException.class)
        .hasMessageStartingWith(verb + " failed on redis prefix '" + prefix + "' at redis://")
        .satisfies(e -> assertThat(e.getMessage()).doesNotContain("4242"))
        .satisfies(e -> assertThat(e.getCause()).isNotNull());
  }

  private static int closedPort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
