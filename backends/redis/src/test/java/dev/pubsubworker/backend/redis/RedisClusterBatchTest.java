package dev.pubsubworker.backend.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pubsubworker.core.BatchLockBackend.BatchResult;
import dev.pubsubworker.core.BatchLockBackend.CompleteRequest;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.InvalidLockRecordException;
import dev.pubsubworker.core.LockBackendException;
import io.lettuce.core.cluster.SlotHash;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/**
 * Batches on a three-node Redis Cluster: split into one script call per slot, sent together,
 * results reassembled in request order; with a hash tag, one call.
 */
class RedisClusterBatchTest {

  @Test
  void a_batch_is_one_script_call_per_slot_and_results_come_back_in_request_order() {
    LocalRedisCluster cluster = LocalRedisCluster.shared();
    RedisLockSettings settings = clusterSettings(cluster, "slots").build();
    KeyLayout layout = new KeyLayout(settings.namespace());
    Map<String, LongAdder> sent = new ConcurrentHashMap<>();
    try (RedisLockBackend backend = RedisLockBackend.create(settings)) {
      backend.addCommandListener(RedisBatchTest.counting(sent));
      backend.checkConnection();
      List<ClaimRequest> claims = RedisBatchTest.fresh("slot-", RedisLockBackend.MAX_BATCH_SIZE);
      long slots =
          claims.stream()
              .mapToInt(r -> SlotHash.getSlot(layout.redisKey(r.key())))
              .distinct()
              .count();
      assertThat(slots).isGreaterThan(1);
      sent.clear();

      List<BatchResult<ClaimResult>> results = backend.claimAll(claims);

      assertThat(sent.get("EVALSHA").sum()).isEqualTo(slots);
      List<CompleteRequest> completes = new ArrayList<>();
      for (int i = 0; i < claims.size(); i++) {
        Claim claim = ((ClaimResult.Won) results.get(i).get()).claim();
        assertThat(claim.key()).isEqualTo(claims.get(i).key());
        assertThat(claim.claimToken()).isEqualTo(claims.get(i).claimToken());
        completes.add(new CompleteRequest(claim, RedisBatchTest.TTL));
      }
      sent.clear();
      assertThat(backend.completeAll(completes)).extracting(BatchResult::get).containsOnly(true);
      assertThat(sent.get("EVALSHA").sum()).isEqualTo(slots);
      assertThat(backend.claimAll(claims))
          .allSatisfy(r -> assertThat(r.get()).isInstanceOf(ClaimResult.AlreadyDone.class));
    } finally {
      cleanUp(cluster, settings);
    }
  }

  @Test
  void with_a_hash_tag_a_batch_is_one_script_call_and_one_entrys_failure_stays_its_own() {
    LocalRedisCluster cluster = LocalRedisCluster.shared();
    RedisLockSettings settings = clusterSettings(cluster, "tagged").hashTag("orders").build();
    Map<String, LongAdder> sent = new ConcurrentHashMap<>();
    try (RedisLockBackend backend = RedisLockBackend.create(settings)) {
      backend.addCommandListener(RedisBatchTest.counting(sent));
      backend.checkConnection();
      List<ClaimRequest> claims = RedisBatchTest.fresh("tagged-", 10);
      // A list where one record belongs, written through the node that owns the slot.
      byte[] foreign = new KeyLayout(settings.namespace()).redisKey(claims.get(3).key());
      writeForeign(cluster, foreign);
      sent.clear();

      List<BatchResult<ClaimResult>> results = backend.claimAll(claims);

      // One script call for the batch, and one that reads the unreadable entry's key back.
      assertThat(sent.get("EVALSHA").sum()).isEqualTo(2);
      for (int i = 0; i < claims.size(); i++) {
        if (i == 3) {
          assertThat(results.get(i).failure())
              .isInstanceOf(InvalidLockRecordException.class)
              .hasMessageContaining("(the Redis key holds a list, not a lock record)");
        } else {
          assertThat(results.get(i).get()).isInstanceOf(ClaimResult.Won.class);
        }
      }
    } finally {
      cleanUp(cluster, settings);
    }
  }

  @Test
  void a_slot_whose_call_fails_fails_only_its_own_entries() {
    LocalRedisCluster cluster = LocalRedisCluster.shared();
    RedisLockSettings settings =
        clusterSettings(cluster, "one_node_down").commandTimeout(Duration.ofMillis(300)).build();
    KeyLayout layout = new KeyLayout(settings.namespace());
    String paused = cluster.nodeUris().get(0); // owns slots 0..5460
    try (RedisLockBackend backend = RedisLockBackend.create(settings);
        TestRedis.Side side = TestRedis.side(paused)) {
      backend.checkConnection();
      List<ClaimRequest> claims = RedisBatchTest.fresh("half-", RedisLockBackend.MAX_BATCH_SIZE);
      side.call("CLIENT", "PAUSE", "3000", "WRITE");
      List<BatchResult<ClaimResult>> results;
      try {
        results = backend.claimAll(claims);
      } finally {
        side.call("CLIENT", "UNPAUSE");
      }
      int onPaused = 0;
      for (int i = 0; i < claims.size(); i++) {
        if (SlotHash.getSlot(layout.redisKey(claims.get(i).key())) < 16384 / 3) {
          onPaused++;
          assertThat(results.get(i).failure())
              .isInstanceOf(LockBackendException.class)
              .hasMessageStartingWith("claimAll failed on redis prefix '" + settings.keyPrefix())
              .hasMessageContaining("no reply within the command timeout");
        } else {
          assertThat(results.get(i).get()).isInstanceOf(ClaimResult.Won.class);
        }
      }
      assertThat(onPaused).isBetween(1, claims.size() - 1);
    } finally {
      cleanUp(cluster, settings);
    }
  }

  private static void writeForeign(LocalRedisCluster cluster, byte[] key) {
    for (String node : cluster.nodeUris()) {
      try (TestRedis.Side side = TestRedis.side(node)) {
        try {
          side.commands().rpush(key, "not a record".getBytes(StandardCharsets.UTF_8));
          return;
        } catch (RuntimeException movedElsewhere) {
          // MOVED: another node owns the slot.
        }
      }
    }
    throw new AssertionError("no node accepted the key");
  }

  private static RedisLockSettings.Builder clusterSettings(LocalRedisCluster cluster, String name) {
    return RedisLockSettings.newBuilder()
        .uri(cluster.seedUri())
        .cluster(true)
        .keyPrefix(TestRedis.uniquePrefix("cluster_batch_" + name));
  }

  private static void cleanUp(LocalRedisCluster cluster, RedisLockSettings settings) {
    for (String node : cluster.nodeUris()) {
      try (TestRedis.Side side = TestRedis.side(node)) {
        side.deleteAll(settings.namespace());
      }
    }
  }
}
