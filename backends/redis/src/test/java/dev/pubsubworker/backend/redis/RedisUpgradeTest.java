package dev.pubsubworker.backend.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.LockRecord;
import dev.pubsubworker.core.LockState;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The rolling upgrade from the hash records of earlier versions: records written exactly as the
 * previous version's scripts wrote them (one hash of six fields, {@code PEXPIREAT} at leaseExpiry +
 * ttl, left there by a complete within the lease) are read, answered, extended, completed and
 * released by this version as that version would, fences and tokens carried over; the first write
 * turns a record into the string format, with its Redis expiry at expiresAt.
 */
class RedisUpgradeTest {

  private static final long LEASE = 30_000;
  private static final long TTL = 600_000;

  private RedisLockSettings settings;
  private RedisLockBackend backend;
  private TestRedis.Side side;

  @BeforeEach
  void open() {
    settings = TestRedis.settings("upgrade").build();
    backend = RedisLockBackend.create(settings);
    side = TestRedis.side();
  }

  @AfterEach
  void close() {
    backend.close();
    side.deleteAll(settings.namespace());
    side.close();
  }

  @Test
  void a_claim_held_under_the_previous_version_is_held_extended_and_completed_by_its_holder() {
    String key = "held-" + UUID.randomUUID();
    long now = serverNow();
    long lease = now + LEASE;
    writeOld(key, "CLAIMED", 3, lease, lease + TTL, "old-token", "fp-1", lease + TTL);
    Claim holder = new Claim(key, 3, Instant.ofEpochMilli(lease), "old-token");

    assertThat(backend.claim(new ClaimRequest(key, ms(LEASE), ms(TTL), "new-token", null)))
        .isEqualTo(new ClaimResult.HeldByOther(Instant.ofEpochMilli(lease), "fp-1"));
    assertThat(type(key)).isEqualTo("hash");

    assertThat(backend.extend(holder, ms(2 * LEASE))).isTrue();
    LockRecord extended = backend.inspect(key).orElseThrow();
    assertThat(extended.state()).isEqualTo(LockState.CLAIMED);
    assertThat(extended.fence()).isEqualTo(3);
    assertThat(extended.leaseExpiry()).isAfter(Instant.ofEpochMilli(lease));
    assertThat(Duration.between(extended.leaseExpiry(), extended.expiresAt())).isEqualTo(ms(TTL));
    assertThat(extended.claimToken()).isEqualTo("old-token");
    assertThat(extended.fingerprint()).isEqualTo("fp-1");
    assertThat(type(key)).isEqualTo("string");
    assertThat(pexpireTime(key)).isEqualTo(extended.expiresAt().toEpochMilli());

    // A stale fence is refused as before; the holder's fence completes.
    assertThat(backend.complete(new Claim(key, 2, Instant.ofEpochMilli(lease), "x"), ms(TTL)))
        .isFalse();
    assertThat(backend.complete(holder, ms(TTL))).isTrue();
    LockRecord done = backend.inspect(key).orElseThrow();
    assertThat(done.state()).isEqualTo(LockState.DONE);
    assertThat(done.fence()).isEqualTo(3);
    assertThat(done.fingerprint()).isEqualTo("fp-1");
    assertThat(pexpireTime(key)).isEqualTo(done.expiresAt().toEpochMilli());
    assertThat(backend.claim(new ClaimRequest(key, ms(LEASE), ms(TTL), "again", "fp-1")))
        .isEqualTo(new ClaimResult.AlreadyDone("fp-1"));
  }

  @Test
  void a_record_completed_under_the_previous_version_is_a_duplicate_until_its_window_ends() {
    String within = "done-" + UUID.randomUUID();
    String past = "done-past-" + UUID.randomUUID();
    long now = serverNow();
    // Completed within the lease: expiresAt before the key's expiry, which the claim set.
    writeOld(within, "DONE", 5, now + LEASE, now + TTL, "t", null, now + LEASE + 2 * TTL);
    writeOld(past, "DONE", 5, now - 2 * TTL, now - TTL, "t", null, now + LEASE);

    assertThat(backend.claim(within, ms(LEASE), "dup"))
        .isEqualTo(new ClaimResult.AlreadyDone(null));
    assertThat(backend.complete(new Claim(within, 5, Instant.now(), "t"), ms(TTL))).isTrue();
    assertThat(type(within)).isEqualTo("hash");

    // Its window ended while the key still lives: reclaimed with the next fence, as before.
    assertThat(backend.claim(past, ms(LEASE), "next"))
        .isInstanceOfSatisfying(
            ClaimResult.Won.class, w -> assertThat(w.claim().fence()).isEqualTo(6));
    assertThat(type(past)).isEqualTo("string");
    LockRecord reclaimed = backend.inspect(past).orElseThrow();
    assertThat(reclaimed.claimToken()).isEqualTo("next");
    assertThat(pexpireTime(past)).isEqualTo(reclaimed.expiresAt().toEpochMilli());
  }

  @Test
  void lapsed_retried_and_released_claims_of_the_previous_version_keep_their_fences() {
    String lapsed = "lapsed-" + UUID.randomUUID();
    String retried = "retried-" + UUID.randomUUID();
    String released = "released-" + UUID.randomUUID();
    long now = serverNow();
    writeOld(lapsed, "CLAIMED", 7, now - 1, now - 1 + TTL, "gone", "fp", now - 1 + TTL);
    writeOld(retried, "CLAIMED", 2, now + LEASE, now + LEASE + TTL, "mine", null, now + TTL);
    writeOld(released, "CLAIMED", 4, now + LEASE, now + LEASE + TTL, "rel", "fp", now + TTL);

    // A lapsed lease: reclaimed, fence + 1, the old fingerprint gone.
    ClaimResult won = backend.claim(lapsed, ms(LEASE), "taker");
    assertThat(won)
        .isInstanceOfSatisfying(
            ClaimResult.Won.class, w -> assertThat(w.claim().fence()).isEqualTo(8));
    assertThat(backend.inspect(lapsed).orElseThrow().fingerprint()).isNull();

    // A claim the previous version won, retried with its token after the upgrade: the same claim.
    assertThat(backend.claim(retried, ms(LEASE), "mine"))
        .isInstanceOfSatisfying(
            ClaimResult.Won.class, w -> assertThat(w.claim().fence()).isEqualTo(2));

    // Release: fence + 1, lease over, token cleared, expiresAt (now the key's expiry) unchanged.
    backend.release(new Claim(released, 4, Instant.ofEpochMilli(now + LEASE), "rel"));
    LockRecord r = backend.inspect(released).orElseThrow();
    assertThat(r.state()).isEqualTo(LockState.CLAIMED);
    assertThat(r.fence()).isEqualTo(5);
    assertThat(r.claimToken()).isNull();
    assertThat(r.fingerprint()).isEqualTo("fp");
    assertThat(r.expiresAt()).isEqualTo(Instant.ofEpochMilli(now + LEASE + TTL));
    assertThat(pexpireTime(released)).isEqualTo(now + LEASE + TTL);
    assertThat(r.reclaimable()).isTrue();
    assertThat(backend.claim(released, ms(LEASE), "after"))
        .isInstanceOfSatisfying(
            ClaimResult.Won.class, w -> assertThat(w.claim().fence()).isEqualTo(6));
  }

  @Test
  void the_batch_verbs_read_and_complete_records_of_the_previous_version() {
    String held = "batch-held-" + UUID.randomUUID();
    String done = "batch-done-" + UUID.randomUUID();
    long now = serverNow();
    writeOld(held, "CLAIMED", 9, now + LEASE, now + LEASE + TTL, "h", null, now + LEASE + TTL);
    writeOld(done, "DONE", 1, now, now + TTL, "d", "fp", now + TTL);

    var claims =
        backend.claimAll(
            List.of(
                new ClaimRequest(held, ms(LEASE), ms(TTL), "other", null),
                new ClaimRequest(done, ms(LEASE), ms(TTL), "other", null)));
    assertThat(claims.get(0).get()).isInstanceOf(ClaimResult.HeldByOther.class);
    assertThat(claims.get(1).get()).isEqualTo(new ClaimResult.AlreadyDone("fp"));
    var completed =
        backend.completeAll(
            List.of(
                new dev.pubsubworker.core.BatchLockBackend.CompleteRequest(
                    new Claim(held, 9, Instant.ofEpochMilli(now + LEASE), "h"), ms(TTL))));
    assertThat(completed.get(0).get()).isTrue();
    assertThat(backend.inspect(held).orElseThrow().state()).isEqualTo(LockState.DONE);
    assertThat(type(held)).isEqualTo("string");
  }

  /** Writes a record as the previous version's scripts did: HSET of the fields, PEXPIREAT. */
  private void writeOld(
      String key,
      String state,
      long fence,
      long leaseExpiry,
      long expiresAt,
      String token,
      String fingerprint,
      long keyExpiry) {
    Map<byte[], byte[]> fields = new LinkedHashMap<>();
    fields.put(bytes("state"), bytes(state));
    fields.put(bytes("fence"), bytes(Long.toString(fence)));
    fields.put(bytes("leaseExpiry"), bytes(Long.toString(leaseExpiry)));
    fields.put(bytes("expiresAt"), bytes(Long.toString(expiresAt)));
    fields.put(bytes("claimToken"), bytes(token));
    if (fingerprint != null) {
      fields.put(bytes("fingerprint"), bytes(fingerprint));
    }
    byte[] redisKey = redisKey(key);
    side.commands().hset(redisKey, fields);
    side.commands().pexpireat(redisKey, keyExpiry);
  }

  private long serverNow() {
    List<byte[]> time = side.commands().time();
    return Long.parseLong(new String(time.get(0), StandardCharsets.US_ASCII)) * 1000
        + Long.parseLong(new String(time.get(1), StandardCharsets.US_ASCII)) / 1000;
  }

  private String type(String key) {
    return side.commands().type(redisKey(key));
  }

  private long pexpireTime(String key) {
    return side.commands().pexpiretime(redisKey(key));
  }

  private byte[] redisKey(String key) {
    return new KeyLayout(settings.namespace()).redisKey(key);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static Duration ms(long millis) {
    return Duration.ofMillis(millis);
  }
}
