package dev.pubsubworker.backend.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.pubsubworker.core.BatchLockBackend.BatchResult;
import dev.pubsubworker.core.BatchLockBackend.CompleteRequest;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.InvalidLockRecordException;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.core.LockState;
import dev.pubsubworker.testservices.TcpProxy;
import dev.pubsubworker.testservices.TestServices;
import io.lettuce.core.event.command.CommandListener;
import io.lettuce.core.event.command.CommandStartedEvent;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The batch verbs beyond what the suites run through {@code BatchedFixture}: one script call per
 * batch (counted on the server and the client), every outcome of the single verbs side by side in
 * one batch, an entry's failure staying that entry's, a failed round trip failing the whole batch
 * with nothing reported won, and the script cache lost under a batch.
 */
class RedisBatchTest {

  private static final Duration LEASE = Duration.ofSeconds(30);
  static final Duration TTL = Duration.ofMinutes(5);
  private static final String SECRET_KEY = "customer-4711/card-4242424242424242";

  @Test
  void a_batch_is_one_evalsha_on_the_server_and_one_command_on_the_client() throws Exception {
    try (PrivateRedis redis = PrivateRedis.start();
        TestRedis.Side side = redis.side()) {
      Map<String, LongAdder> sent = new ConcurrentHashMap<>();
      RedisLockBackend backend =
          RedisLockBackend.create(settingsOn(redis.uri(), "roundtrip").build());
      try (backend) {
        backend.addCommandListener(counting(sent));
        backend.checkConnection(); // connects and loads the scripts once
        sent.clear();
        long evalshaBefore = side.commandCalls("evalsha");
        long evalBefore = side.commandCalls("eval");

        for (int round = 0; round < 3; round++) {
          List<ClaimRequest> claims = fresh("r" + round + "-", RedisLockBackend.MAX_BATCH_SIZE);
          List<CompleteRequest> completes = new ArrayList<>();
          for (BatchResult<ClaimResult> r : backend.claimAll(claims)) {
            completes.add(new CompleteRequest(((ClaimResult.Won) r.get()).claim(), TTL));
          }
          assertThat(backend.completeAll(completes)).allMatch(BatchResult::get);
        }

        assertThat(side.commandCalls("evalsha") - evalshaBefore).isEqualTo(6);
        assertThat(side.commandCalls("eval") - evalBefore).isZero();
        assertThat(sent.keySet()).containsExactly("EVALSHA");
        assertThat(sent.get("EVALSHA").sum()).isEqualTo(6);
      }
    }
  }

  @Test
  void one_batch_gives_each_entry_exactly_its_single_verbs_outcome_in_request_order() {
    try (RedisLockBackend backend = RedisLockBackend.create(TestRedis.settings("mixed").build());
        RedisLockBackend other = RedisLockBackend.create(backend.settings())) {
      String id = UUID.randomUUID().toString();
      Claim held =
          ((ClaimResult.Won) other.claim(new ClaimRequest("held-" + id, LEASE, TTL, "o", "fp-h")))
              .claim();
      Claim done = ((ClaimResult.Won) other.claim("done-" + id, LEASE, "o")).claim();
      assertThat(other.complete(done, TTL)).isTrue();
      Claim released = ((ClaimResult.Won) other.claim("released-" + id, LEASE, "o")).claim();
      other.release(released);

      List<BatchResult<ClaimResult>> results =
          backend.claimAll(
              List.of(
                  new ClaimRequest("fresh-" + id, LEASE, TTL, "me", "fp-1"),
                  new ClaimRequest("held-" + id, LEASE, TTL, "me", null),
                  new ClaimRequest("done-" + id, LEASE, TTL, "me", null),
                  new ClaimRequest("released-" + id, LEASE, TTL, "me", null)));

      Claim fresh = ((ClaimResult.Won) results.get(0).get()).claim();
      assertThat(fresh.key()).isEqualTo("fresh-" + id);
      assertThat(fresh.fence()).isEqualTo(1);
      assertThat(results.get(1).get())
          .isEqualTo(new ClaimResult.HeldByOther(held.leaseExpiry(), "fp-h"));
      assertThat(results.get(2).get()).isInstanceOf(ClaimResult.AlreadyDone.class);
      Claim reclaimed = ((ClaimResult.Won) results.get(3).get()).claim();
      assertThat(reclaimed.fence()).isEqualTo(3); // claimed 1, released 2, reclaimed 3
      assertThat(backend.inspect("fresh-" + id).orElseThrow().fingerprint()).isEqualTo("fp-1");

      // Retried with the same tokens (a lost reply), the won entries re-affirm their own claims.
      List<BatchResult<ClaimResult>> retried =
          backend.claimAll(
              List.of(
                  new ClaimRequest("fresh-" + id, LEASE, TTL, "me", "fp-1"),
                  new ClaimRequest("released-" + id, LEASE, TTL, "me", null)));
      assertThat(((ClaimResult.Won) retried.get(0).get()).claim().fence()).isEqualTo(1);
      assertThat(((ClaimResult.Won) retried.get(1).get()).claim().fence()).isEqualTo(3);

      List<BatchResult<Boolean>> completed =
          backend.completeAll(
              List.of(
                  new CompleteRequest(fresh, TTL),
                  new CompleteRequest(new Claim(held.key(), 99, held.leaseExpiry(), "x"), TTL),
                  new CompleteRequest(done, TTL),
                  new CompleteRequest(released, TTL),
                  new CompleteRequest(new Claim("absent-" + id, 1, Instant.now(), "x"), TTL)));
      assertThat(completed)
          .extracting(BatchResult::get)
          .containsExactly(true, false, true, false, false);
      assertThat(backend.inspect("fresh-" + id).orElseThrow().state()).isEqualTo(LockState.DONE);
      assertThat(backend.inspect(held.key()).orElseThrow().state()).isEqualTo(LockState.CLAIMED);
      assertThat(backend.inspect("released-" + id).orElseThrow().state())
          .isEqualTo(LockState.CLAIMED);
      assertThat(backend.inspect("absent-" + id)).isEmpty();
      cleanUp(backend);
    }
  }

  @Test
  void an_entry_whose_key_holds_something_else_fails_alone_and_without_the_key_in_the_message() {
    RedisLockSettings settings = TestRedis.settings("entry_failure").build();
    try (RedisLockBackend backend = RedisLockBackend.create(settings);
        TestRedis.Side side = TestRedis.side()) {
      byte[] foreign = new KeyLayout(settings.namespace()).redisKey(SECRET_KEY);
      side.commands().rpush(foreign, "not a record".getBytes(StandardCharsets.UTF_8));

      List<BatchResult<ClaimResult>> claimed =
          backend.claimAll(
              List.of(
                  new ClaimRequest("a", LEASE, TTL, "t", null),
                  new ClaimRequest(SECRET_KEY, LEASE, TTL, "t", null),
                  new ClaimRequest("b", LEASE, TTL, "t", null)));

      assertThat(claimed.get(0).get()).isInstanceOf(ClaimResult.Won.class);
      assertThat(claimed.get(2).get()).isInstanceOf(ClaimResult.Won.class);
      assertThat(claimed.get(1).isFailure()).isTrue();
      // A list where a record belongs: an unreadable record, for that entry only.
      assertThat(claimed.get(1).failure())
          .isInstanceOfSatisfying(
              InvalidLockRecordException.class,
              e -> {
                assertThat(e.key()).isEqualTo(SECRET_KEY);
                assertThat(e.storedFields()).containsEntry("(type)", "list");
              })
          .hasMessageStartingWith(
              "claim failed on redis prefix '"
                  + settings.keyPrefix()
                  + "' at "
                  + settings.endpoint()
                  + ": the key's record is not one this backend can read (the Redis key holds a"
                  + " list, not a lock record)");
      assertThat(side.commands().lrange(foreign, 0, -1))
          .singleElement()
          .isEqualTo("not a record".getBytes(StandardCharsets.UTF_8));

      Claim a = ((ClaimResult.Won) claimed.get(0).get()).claim();
      Claim b = ((ClaimResult.Won) claimed.get(2).get()).claim();
      List<BatchResult<Boolean>> completed =
          backend.completeAll(
              List.of(
                  new CompleteRequest(a, TTL),
                  new CompleteRequest(new Claim(SECRET_KEY, 1, Instant.now(), "t"), TTL),
                  new CompleteRequest(b, TTL)));
      assertThat(completed.get(0).get()).isTrue();
      assertThat(completed.get(2).get()).isTrue();
      assertThat(completed.get(1).failure())
          .isInstanceOf(InvalidLockRecordException.class)
          .hasMessageStartingWith("complete failed on redis prefix '" + settings.keyPrefix())
          .hasMessageContaining("(the Redis key holds a list, not a lock record)")
          .satisfies(e -> assertThat(e.getMessage()).doesNotContain("4242"));
      side.deleteAll(settings.namespace());
    }
  }

  @Test
  void bad_keys_fail_their_entry_and_bad_batches_are_rejected_before_any_io() throws IOException {
    RedisLockSettings unreachable =
        RedisLockSettings.newBuilder()
            .uri("redis://127.0.0.1:" + closedPort())
            .keyPrefix(TestRedis.uniquePrefix("bad_batches"))
            .connectTimeout(Duration.ofSeconds(1))
            .build();
    try (RedisLockBackend backend = RedisLockBackend.create(unreachable)) {
      ClaimRequest good = new ClaimRequest("good", LEASE, TTL, "t", null);
      assertThatThrownBy(() -> backend.claimAll(List.of()))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("a batch must have 1 to 64 entries, but had 0");
      assertThatThrownBy(
              () -> backend.claimAll(fresh("over-", RedisLockBackend.MAX_BATCH_SIZE + 1)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("a batch must have 1 to 64 entries, but had 65");
      assertThatThrownBy(() -> backend.claimAll(List.of(good, good)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("a batch must not repeat a key, but entry 1 repeats an earlier one");
      Claim claim = new Claim("good", 1, Instant.now(), "t");
      assertThatThrownBy(
              () ->
                  backend.completeAll(
                      List.of(new CompleteRequest(claim, TTL), new CompleteRequest(claim, TTL))))
          .isInstanceOf(IllegalArgumentException.class);
      // Only bad keys: each entry fails as the single verb would, and nothing is sent.
      List<BatchResult<ClaimResult>> bad =
          backend.claimAll(
              List.of(
                  new ClaimRequest("", LEASE, TTL, "t", null),
                  new ClaimRequest(
                      "k".repeat(RedisLockBackend.MAX_KEY_BYTES + 1), LEASE, TTL, "t", null)));
      assertThat(bad)
          .allSatisfy(r -> assertThat(r.failure()).isInstanceOf(IllegalArgumentException.class));
      assertThat(backend.maxBatchSize()).isEqualTo(64);
    }
    try (RedisLockBackend backend =
        RedisLockBackend.create(TestRedis.settings("bad_entry").build())) {
      List<BatchResult<ClaimResult>> mixed =
          backend.claimAll(
              List.of(
                  new ClaimRequest("half a pair \uD83D", LEASE, TTL, "t", null),
                  new ClaimRequest("fine", LEASE, TTL, "t", null)));
      assertThat(mixed.get(0).failure())
          .isInstanceOf(IllegalArgumentException.class)
          .satisfies(e -> assertThat(e.getMessage()).doesNotContain("half a pair"));
      assertThat(mixed.get(1).get()).isInstanceOf(ClaimResult.Won.class);
      cleanUp(backend);
    }
  }

  @Test
  void a_cut_connection_fails_the_whole_batch_and_no_entry_is_reported_won() {
    RedisLockSettings.Builder base = TestRedis.settings("cut");
    try (TcpProxy proxy = TcpProxy.start(TestServices.redis().host(), TestServices.redis().port());
        RedisLockBackend backend =
            RedisLockBackend.create(
                base.uri("redis://" + proxy.hostPort())
                    .connectTimeout(Duration.ofSeconds(1))
                    .commandTimeout(Duration.ofSeconds(2))
                    .build());
        RedisLockBackend direct = RedisLockBackend.create(base.uri(TestRedis.uri()).build())) {
      List<ClaimRequest> first = fresh("before-", 4);
      List<Claim> won = new ArrayList<>();
      for (BatchResult<ClaimResult> r : backend.claimAll(first)) {
        won.add(((ClaimResult.Won) r.get()).claim());
      }

      proxy.cut();
      List<ClaimRequest> second = fresh("during-", 8);
      assertThatThrownBy(() -> backend.claimAll(second))
          .isInstanceOf(LockBackendException.class)
          .hasMessageStartingWith(
              "claimAll failed on redis prefix '" + backend.settings().keyPrefix())
          .satisfies(e -> assertThat(e.getCause()).isNotNull());
      assertThatThrownBy(
              () ->
                  backend.completeAll(won.stream().map(c -> new CompleteRequest(c, TTL)).toList()))
          .isInstanceOf(LockBackendException.class)
          .hasMessageStartingWith("completeAll failed on redis prefix '");
      // Nothing of the failed batches reached Redis.
      for (ClaimRequest r : second) {
        assertThat(direct.inspect(r.key())).isEmpty();
      }
      for (Claim c : won) {
        assertThat(direct.inspect(c.key()).orElseThrow().state()).isEqualTo(LockState.CLAIMED);
      }

      proxy.restore();
      // The driver reconnects by itself; the same batch then goes through.
      List<BatchResult<Boolean>> completed =
          await()
              .atMost(Duration.ofSeconds(20))
              .ignoreException(LockBackendException.class)
              .until(
                  () ->
                      backend.completeAll(
                          won.stream().map(c -> new CompleteRequest(c, TTL)).toList()),
                  r -> true);
      assertThat(completed).extracting(BatchResult::get).containsOnly(true);
      cleanUp(direct);
    }
  }

  @Test
  void no_reply_within_the_timeout_fails_the_whole_batch() {
    RedisLockSettings.Builder base = TestRedis.settings("frozen");
    try (TcpProxy proxy = TcpProxy.start(TestServices.redis().host(), TestServices.redis().port());
        RedisLockBackend backend =
            RedisLockBackend.create(
                base.uri("redis://" + proxy.hostPort())
                    .commandTimeout(Duration.ofMillis(300))
                    .build());
        RedisLockBackend direct = RedisLockBackend.create(base.uri(TestRedis.uri()).build())) {
      backend.checkConnection();
      proxy.freeze();
      List<ClaimRequest> batch = fresh("frozen-", 8);
      try {
        assertThatThrownBy(() -> backend.claimAll(batch))
            .isInstanceOf(LockBackendException.class)
            .hasMessage(
                "claimAll failed on redis prefix '"
                    + backend.settings().keyPrefix()
                    + "' at "
                    + backend.settings().endpoint()
                    + ": no reply within the command timeout of PT0.3S");
      } finally {
        proxy.resume();
      }
      // The outcome of every entry is unknown, as for a failed single claim: the held request may
      // still land once the network heals. A retry with the same tokens re-affirms what landed.
      List<BatchResult<ClaimResult>> retried =
          await()
              .atMost(Duration.ofSeconds(20))
              .ignoreException(LockBackendException.class)
              .until(() -> backend.claimAll(batch), r -> true);
      assertThat(retried)
          .allSatisfy(r -> assertThat(((ClaimResult.Won) r.get()).claim().fence()).isEqualTo(1));
      cleanUp(direct);
    }
  }

  @Test
  void a_lost_script_cache_costs_the_batch_one_eval_then_evalsha_again() throws Exception {
    try (PrivateRedis redis = PrivateRedis.start();
        TestRedis.Side side = redis.side()) {
      Map<String, LongAdder> sent = new ConcurrentHashMap<>();
      try (RedisLockBackend backend =
          RedisLockBackend.create(settingsOn(redis.uri(), "noscript").build())) {
        backend.addCommandListener(counting(sent));
        backend.checkConnection();
        side.text().scriptFlush();
        sent.clear();

        List<ClaimRequest> claims = fresh("flushed-", 5);
        List<BatchResult<ClaimResult>> results = backend.claimAll(claims);
        assertThat(results)
            .allSatisfy(r -> assertThat(r.get()).isInstanceOf(ClaimResult.Won.class));
        // EVALSHA answered NOSCRIPT, so the text was sent once with EVAL, which cached it again.
        assertThat(sent.get("EVALSHA").sum()).isEqualTo(1);
        assertThat(sent.get("EVAL").sum()).isEqualTo(1);
        assertThat(side.commandCalls("eval")).isEqualTo(1);

        sent.clear();
        List<CompleteRequest> completes =
            results.stream()
                .map(r -> new CompleteRequest(((ClaimResult.Won) r.get()).claim(), TTL))
                .toList();
        side.text().scriptFlush();
        assertThat(backend.completeAll(completes)).extracting(BatchResult::get).containsOnly(true);
        assertThat(sent.get("EVALSHA").sum()).isEqualTo(1);
        assertThat(sent.get("EVAL").sum()).isEqualTo(1);

        // The second flush took the claim script too: the next claim batch re-caches it ...
        assertThat(backend.claimAll(fresh("recache-", 5)))
            .allSatisfy(r -> assertThat(r.get()).isInstanceOf(ClaimResult.Won.class));
        // ... and the one after is a single EVALSHA.
        sent.clear();
        assertThat(backend.claimAll(fresh("cached-", 5)))
            .allSatisfy(r -> assertThat(r.get()).isInstanceOf(ClaimResult.Won.class));
        assertThat(sent.keySet()).containsExactly("EVALSHA");
        assertThat(sent.get("EVALSHA").sum()).isEqualTo(1);
      }
    }
  }

  static CommandListener counting(Map<String, LongAdder> sent) {
    return new CommandListener() {
      @Override
      public void commandStarted(CommandStartedEvent event) {
        String type = event.getCommand().getType().toString();
        sent.computeIfAbsent(type, t -> new LongAdder()).increment();
      }
    };
  }

  static List<ClaimRequest> fresh(String prefix, int n) {
    String id = UUID.randomUUID().toString().substring(0, 8);
    return IntStream.range(0, n)
        .mapToObj(i -> new ClaimRequest(prefix + id + "-" + i, LEASE, TTL, "token-" + i, null))
        .toList();
  }

  private static RedisLockSettings.Builder settingsOn(String uri, String name) {
    return RedisLockSettings.newBuilder().uri(uri).keyPrefix(TestRedis.uniquePrefix(name));
  }

  private static void cleanUp(RedisLockBackend backend) {
    try (TestRedis.Side side = TestRedis.side()) {
      side.deleteAll(backend.settings().namespace());
    }
  }

  private static int closedPort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }
}
