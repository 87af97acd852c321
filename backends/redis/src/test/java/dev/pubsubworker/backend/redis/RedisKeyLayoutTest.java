package dev.pubsubworker.backend.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.LockRecord;
import dev.pubsubworker.core.LockState;
import io.lettuce.core.cluster.SlotHash;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * What lands in Redis: one string per record at exactly {@code prefix + UTF-8(key)} (hostile keys
 * included), the optional hash tag, the key's own Redis expiry at {@code expiresAt}, and a purge
 * that never strays outside its prefix.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedisKeyLayoutTest {

  private static final Duration LEASE = Duration.ofSeconds(30);
  private static final Duration TTL = Duration.ofMinutes(10);
  private static final Duration RETENTION = Duration.ofMinutes(20);

  private final List<RedisLockSettings> used = new ArrayList<>();
  private TestRedis.Side side;

  @BeforeAll
  void open() {
    side = TestRedis.side();
  }

  @AfterAll
  void close() {
    for (RedisLockSettings s : used) {
      side.deleteAll(s.namespace());
    }
    side.close();
  }

  private RedisLockBackend backend(RedisLockSettings.Builder builder) {
    RedisLockSettings s = builder.build();
    used.add(s);
    return RedisLockBackend.create(s);
  }

  private byte[] redisKey(RedisLockSettings s, String key) {
    return (s.namespace() + key).getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void hostile_and_binary_looking_keys_are_stored_byte_for_byte() {
    String key1024 = "€".repeat(341) + "a";
    String longest = "😀".repeat(RedisLockBackend.MAX_KEY_BYTES / 4);
    List<String> keys =
        List.of(
            "with spaces and\ttabs",
            "new\nlines\r\nand\rreturns",
            "{braces}{}}{",
            "{" + "a".repeat(100) + "}",
            "nul\u0000inside\u0000",
            "\u00ff\u00fe\u00fd binary-looking latin-1",
            "\\x00\\xff\\r\\n literal escapes",
            "*?[a-z]^$ glob and regex",
            "\uFFFD replacement char",
            "😀 emoji and 日本語",
            key1024,
            longest);
    assertThat(key1024.getBytes(StandardCharsets.UTF_8)).hasSize(1024);
    try (RedisLockBackend backend = backend(TestRedis.settings("hostile"))) {
      RedisLockSettings s = backend.settings();
      for (String key : keys) {
        Claim c =
            ((ClaimResult.Won)
                    backend.claim(new ClaimRequest(key, LEASE, RETENTION, "t", fingerprint(key))))
                .claim();
        assertThat(c.key()).isEqualTo(key);
        // The record is one string: state, fence, retention, token, fingerprint; its Redis expiry
        // is expiresAt, leaseExpiry = expiresAt - retention.
        assertThat(value(s, key))
            .isEqualTo("CLAIMED 1 " + RETENTION.toMillis() + " t " + fingerprint(key));
        assertThat(pexpireTime(s, key)).isEqualTo(c.leaseExpiry().plus(RETENTION).toEpochMilli());
        assertThat(backend.complete(c, TTL)).isTrue();
        LockRecord r = backend.inspect(key).orElseThrow();
        assertThat(r.key()).isEqualTo(key);
        assertThat(r.fingerprint()).isEqualTo(fingerprint(key));
        assertThat(r.state()).isEqualTo(LockState.DONE);
        assertThat(backend.claim(key, LEASE, "u")).isInstanceOf(ClaimResult.AlreadyDone.class);
        assertThat(backend.forget(key)).isTrue();
        assertThat(side.commands().exists(redisKey(s, key))).isZero();
      }
    }
  }

  @Test
  void the_redis_expiry_follows_expires_at_so_redis_reaps_records_itself() {
    try (RedisLockBackend backend = backend(TestRedis.settings("expiry"))) {
      RedisLockSettings s = backend.settings();
      String key = "expiry-" + UUID.randomUUID();
      Claim c =
          ((ClaimResult.Won) backend.claim(new ClaimRequest(key, LEASE, RETENTION, "t", null)))
              .claim();
      assertThat(pexpireTime(s, key)).isEqualTo(expiresAt(backend, key));
      assertThat(expiresAt(backend, key)).isEqualTo(c.leaseExpiry().plus(RETENTION).toEpochMilli());
      assertThat(backend.extend(c, LEASE.multipliedBy(2))).isTrue();
      assertThat(pexpireTime(s, key)).isEqualTo(expiresAt(backend, key));
      backend.release(c);
      assertThat(pexpireTime(s, key)).isEqualTo(expiresAt(backend, key));
      Claim again = ((ClaimResult.Won) backend.claim(key, LEASE, "t2")).claim();
      long claimedUntil = pexpireTime(s, key);
      assertThat(claimedUntil).isEqualTo(expiresAt(backend, key));
      assertThat(backend.complete(again, TTL)).isTrue();
      long done = expiresAt(backend, key);
      assertThat(done - backend.inspect(key).orElseThrow().observedAt().toEpochMilli())
          .isBetween(TTL.toMillis() - 5_000, TTL.toMillis());
      // Completed within the lease: the window ends before the claim's expiry, and the key's
      // expiry moves to it (the value and the expiry are one SET): Redis reaps the record right
      // after expiresAt, never before.
      assertThat(done).isLessThanOrEqualTo(claimedUntil);
      assertThat(pexpireTime(s, key)).isEqualTo(done);
      // A window that ends after the claim's expiry moves it too.
      String longer = "longer-" + UUID.randomUUID();
      Claim shortClaim =
          ((ClaimResult.Won)
                  backend.claim(new ClaimRequest(longer, LEASE, Duration.ofMillis(1), "t", null)))
              .claim();
      assertThat(backend.complete(shortClaim, TTL)).isTrue();
      assertThat(pexpireTime(s, longer)).isEqualTo(expiresAt(backend, longer));

      // With a real (tiny) window, Redis itself removes the record: no purge, no sweeper.
      String shortLived = "short-" + UUID.randomUUID();
      Claim brief =
          ((ClaimResult.Won)
                  backend.claim(
                      new ClaimRequest(
                          shortLived, Duration.ofMillis(50), Duration.ofMillis(1), "t", null)))
              .claim();
      assertThat(backend.complete(brief, Duration.ofMillis(100))).isTrue();
      await()
          .atMost(Duration.ofSeconds(5))
          .pollInterval(Duration.ofMillis(20))
          .until(() -> side.commands().exists(redisKey(s, shortLived)) == 0);
      assertThat(backend.claim(shortLived, LEASE, "t3"))
          .isInstanceOfSatisfying(
              ClaimResult.Won.class, w -> assertThat(w.claim().fence()).isEqualTo(1));
    }
  }

  @Test
  void a_hash_tag_puts_every_record_in_one_cluster_slot() {
    try (RedisLockBackend backend = backend(TestRedis.settings("tagged").hashTag("orders-locks"))) {
      RedisLockSettings s = backend.settings();
      assertThat(s.namespace()).endsWith(":{orders-locks}");
      List<String> keys = List.of("a", "b", "{own-tag}c", "}{d", "😀");
      for (String key : keys) {
        assertThat(backend.claim(key, LEASE, "t")).isInstanceOf(ClaimResult.Won.class);
        assertThat(side.commands().exists(redisKey(s, key))).isEqualTo(1);
      }
      assertThat(keys.stream().map(k -> SlotHash.getSlot(redisKey(s, k))).distinct())
          .containsExactly(SlotHash.getSlot("orders-locks"));
    }
  }

  @Test
  void purge_matches_its_prefix_literally_and_leaves_neighbours_alone() {
    String base = TestRedis.uniquePrefix("glob");
    AtomicLong offset = new AtomicLong();
    // A prefix full of glob characters, and a neighbour its unescaped pattern would match.
    try (RedisLockBackend globby =
            backend(
                RedisLockSettings.newBuilder()
                    .uri(TestRedis.uri())
                    .keyPrefix(base + "*?[x]\\:")
                    .clockOffset(offset::get));
        RedisLockBackend neighbour =
            backend(RedisLockSettings.newBuilder().uri(TestRedis.uri()).keyPrefix(base + "zz:"))) {
      for (int i = 0; i < 3; i++) {
        Claim n =
            ((ClaimResult.Won)
                    neighbour.claim(
                        new ClaimRequest("n" + i, LEASE, Duration.ofSeconds(1), "t", null)))
                .claim();
        assertThat(neighbour.complete(n, Duration.ofSeconds(1))).isTrue();
        Claim g =
            ((ClaimResult.Won)
                    globby.claim(
                        new ClaimRequest("g" + i, LEASE, Duration.ofSeconds(1), "t", null)))
                .claim();
        assertThat(globby.complete(g, Duration.ofSeconds(1))).isTrue();
      }
      offset.addAndGet(Duration.ofDays(1).toMillis());
      assertThat(globby.purgeExpired(100)).isEqualTo(3);
      for (int i = 0; i < 3; i++) {
        assertThat(neighbour.inspect("n" + i)).isPresent();
        assertThat(globby.inspect("g" + i)).isEmpty();
      }
    }
  }

  /** The key itself where it fits a fingerprint (hostile characters included). */
  private static String fingerprint(String key) {
    return key.length() <= 200 ? "fp:" + key : "fp:long";
  }

  private String value(RedisLockSettings s, String key) {
    return new String(side.commands().get(redisKey(s, key)), StandardCharsets.UTF_8);
  }

  private long pexpireTime(RedisLockSettings s, String key) {
    return side.commands().pexpiretime(redisKey(s, key));
  }

  private static long expiresAt(RedisLockBackend backend, String key) {
    return backend.inspect(key).orElseThrow().expiresAt().toEpochMilli();
  }
}
