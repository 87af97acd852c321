package dev.pubsubworker.backend.datastore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.cloud.datastore.Datastore;
import com.google.cloud.datastore.Entity;
import com.google.cloud.datastore.Key;
import com.google.cloud.datastore.ValueType;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.Completion;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.core.LockRecord;
import dev.pubsubworker.core.LockResult;
import dev.pubsubworker.core.LockState;
import dev.pubsubworker.testservices.DatastoreEmulator;
import dev.pubsubworker.testservices.TcpProxy;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * What the Datastore backend promises beyond the shared contract: store-level contention, outages
 * surfacing as exceptions, retry safety through the stored claim token, batched and re-checked
 * purges, key-name escaping and limits, the entity layout a TTL policy relies on, and the RPCs each
 * verb costs. Runs against one emulator per subclass.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class DatastoreBackendBehaviour {

  static final Duration LEASE = Duration.ofSeconds(30);
  static final Duration TTL = Duration.ofHours(1);

  private DatastoreEmulator emulator;
  private DatastoreFixture fixture;
  private final List<AutoCloseable> toClose = new ArrayList<>();

  /** The emulator this class runs on. */
  abstract DatastoreEmulator emulator();

  @BeforeAll
  final void open() {
    emulator = emulator();
    fixture = new DatastoreFixture(emulator);
  }

  @AfterAll
  final void closeAll() throws Exception {
    for (AutoCloseable c : toClose) {
      c.close();
    }
    fixture.close();
  }

  DatastoreLockBackend backend() {
    return fixture.backend();
  }

  static String newKey(String name) {
    return name + "-" + UUID.randomUUID();
  }

  static ClaimRequest request(String key) {
    return new ClaimRequest(key, LEASE, Duration.ofHours(2), UUID.randomUUID().toString(), null);
  }

  /** A fixture of its own: its own namespace and clock, for tests that count what is stored. */
  DatastoreFixture isolatedFixture(
      Function<DatastoreLockSettings.Builder, DatastoreLockSettings.Builder> tweak) {
    DatastoreFixture f = new DatastoreFixture(emulator, tweak);
    toClose.add(f);
    return f;
  }

  <T extends AutoCloseable> T closeLater(T c) {
    toClose.add(c);
    return c;
  }

  @Nested
  @DisplayName("contention")
  class Contention {

    @Test
    @DisplayName("16 threads on one backend claim one absent key: one Won, 15 HeldByOther, fence 1")
    void sixteen_threads_on_one_instance() throws Exception {
      String key = newKey("contended-shared");
      List<ClaimResult> results = claimAtOnce(key, i -> backend());
      assertOneWinner(key, results);
    }

    @Test
    @DisplayName(
        "16 backends (as 16 workers) claim one absent key: one Won, 15 HeldByOther, fence 1")
    void sixteen_instances_contend_in_the_store() throws Exception {
      List<DatastoreLockBackend> instances = new ArrayList<>();
      for (int i = 0; i < 16; i++) {
        instances.add(closeLater(DatastoreLockBackend.create(fixture.settings())));
      }
      String key = newKey("contended-store");
      List<ClaimResult> results = claimAtOnce(key, instances::get);
      assertOneWinner(key, results);
    }

    private List<ClaimResult> claimAtOnce(String key, Function<Integer, DatastoreLockBackend> who)
        throws Exception {
      ExecutorService pool = Executors.newFixedThreadPool(16);
      try {
        CountDownLatch go = new CountDownLatch(1);
        List<Future<ClaimResult>> futures = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
          DatastoreLockBackend b = who.apply(i);
          futures.add(
              pool.submit(
                  () -> {
                    go.await();
                    return b.claim(request(key));
                  }));
        }
        go.countDown();
        List<ClaimResult> results = new ArrayList<>();
        for (Future<ClaimResult> f : futures) {
          // get() rethrows any exception that escaped a claim, failing the test.
          results.add(f.get(2, TimeUnit.MINUTES));
        }
        return results;
      } finally {
        pool.shutdownNow();
      }
    }

    private void assertOneWinner(String key, List<ClaimResult> results) {
      assertThat(results.stream().filter(r -> r instanceof ClaimResult.Won)).hasSize(1);
      assertThat(results.stream().filter(r -> r instanceof ClaimResult.HeldByOther)).hasSize(15);
      assertThat(results.stream().filter(r -> r instanceof ClaimResult.Won))
          .allSatisfy(r -> assertThat(((ClaimResult.Won) r).claim().fence()).isEqualTo(1));
      assertThat(backend().inspect(key).orElseThrow().fence()).isEqualTo(1);
    }
  }

  @Nested
  @DisplayName("outage")
  class Outage {

    private DatastoreLockBackend throughProxy(TcpProxy proxy) {
      return closeLater(
          DatastoreLockBackend.create(
              fixture.settings().toBuilder()
                  .emulatorHost(proxy.hostPort())
                  .maxAttempts(3)
                  .rpcTimeout(Duration.ofSeconds(5))
                  .build()));
    }

    @Test
    @DisplayName("claim during an outage: LockBackendException with the cause; the guard rethrows")
    void claim_during_an_outage_throws_and_the_guard_rethrows() throws Exception {
      TcpProxy proxy = closeLater(TcpProxy.start(emulator.hostPort()));
      DatastoreLockBackend b = throughProxy(proxy);
      String key = newKey("outage-claim");
      assertThat(b.inspect(key)).isEmpty(); // connected and working
      proxy.cut();
      assertThatThrownBy(() -> b.claim(request(key)))
          .isInstanceOf(LockBackendException.class)
          .hasMessageContaining("claim failed on datastore kind 'PubsubWorkerLock'")
          .hasMessageNotContaining(key)
          .cause()
          .isNotNull();
      AtomicInteger runs = new AtomicInteger();
      try (IdempotencyGuard guard = IdempotencyGuard.newBuilder(b).claimRetries(0).build()) {
        assertThatThrownBy(() -> guard.lock(key, ctx -> runs.incrementAndGet()))
            .isInstanceOf(LockBackendException.class);
      }
      assertThat(runs).hasValue(0);
      assertThat(backend().inspect(key)).as("nothing was written").isEmpty();
      // The outage ends: the same backend works again.
      proxy.restore();
      assertThat(b.claim(request(key))).isInstanceOf(ClaimResult.Won.class);
    }

    @Test
    @DisplayName("outage during the work: complete fails, the guard says so, nothing is DONE")
    void outage_during_the_work_leaves_nothing_done() throws Exception {
      TcpProxy proxy = closeLater(TcpProxy.start(emulator.hostPort()));
      DatastoreLockBackend b = throughProxy(proxy);
      String key = newKey("outage-work");
      LockResult<String> result;
      try (IdempotencyGuard guard =
          IdempotencyGuard.newBuilder(b).heartbeat(false).claimRetries(0).build()) {
        result =
            guard.lock(
                key,
                ctx -> {
                  proxy.cut();
                  return "sent";
                });
      }
      assertThat(result).isInstanceOf(LockResult.Executed.class);
      assertThat(((LockResult.Executed<String>) result).completion())
          .isEqualTo(Completion.COMPLETE_FAILED);
      LockRecord r = backend().inspect(key).orElseThrow();
      assertThat(r.state()).isEqualTo(LockState.CLAIMED);
      assertThat(r.fence()).isEqualTo(1);
    }

    @Test
    @DisplayName("a closed port: every verb throws LockBackendException with the cause")
    void closed_port_fails_every_verb() throws Exception {
      int port;
      try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
        port = s.getLocalPort();
      }
      DatastoreLockBackend b =
          closeLater(
              DatastoreLockBackend.create(
                  fixture.settings().toBuilder()
                      .emulatorHost("127.0.0.1:" + port)
                      .maxAttempts(2)
                      .build()));
      String key = newKey("closed-port");
      Claim claim = new Claim(key, 1, java.time.Instant.now(), "t");
      assertThatThrownBy(() -> b.claim(request(key)))
          .isInstanceOf(LockBackendException.class)
          .hasRootCauseInstanceOf(IOException.class);
      assertThatThrownBy(() -> b.complete(claim, TTL)).isInstanceOf(LockBackendException.class);
      assertThatThrownBy(() -> b.release(claim)).isInstanceOf(LockBackendException.class);
      assertThatThrownBy(() -> b.extend(claim, LEASE)).isInstanceOf(LockBackendException.class);
      assertThatThrownBy(() -> b.inspect(key)).isInstanceOf(LockBackendException.class);
      assertThatThrownBy(() -> b.forget(key)).isInstanceOf(LockBackendException.class);
      assertThatThrownBy(() -> b.purgeExpired(10)).isInstanceOf(LockBackendException.class);
    }
  }

  @Nested
  @DisplayName("retry safety")
  class RetrySafety {

    @Test
    @DisplayName("a committed claim whose result was lost, retried with its token: Won, same fence")
    void lost_response_then_retry_with_the_same_token_reaffirms() {
      String key = newKey("retry");
      ClaimRequest request = request(key);
      backend().claim(request); // committed; the caller never sees the answer
      fixture.advanceClock(Duration.ofSeconds(10));
      // The retry may land on another worker's client: the token is in the entity, not in memory.
      ClaimResult retried = fixture.secondInstance().claim(request);
      assertThat(retried).isInstanceOf(ClaimResult.Won.class);
      Claim claim = ((ClaimResult.Won) retried).claim();
      assertThat(claim.fence()).isEqualTo(1);
      LockRecord r = backend().inspect(key).orElseThrow();
      assertThat(r.fence()).isEqualTo(1);
      assertThat(r.claimToken()).isEqualTo(request.claimToken());
      assertThat(r.leaseExpiry()).isEqualTo(claim.leaseExpiry());
      assertThat(backend().claim(request(key))).isInstanceOf(ClaimResult.HeldByOther.class);
      assertThat(backend().complete(claim, TTL)).isTrue();
    }

    @Test
    @DisplayName("on the reclaim path the retried claim keeps the reclaim's fence (no double bump)")
    void lost_response_on_the_reclaim_path_keeps_the_fence() {
      String key = newKey("retry-reclaim");
      backend().claim(request(key));
      fixture.advanceClock(LEASE);
      ClaimRequest request = request(key);
      backend().claim(request);
      ClaimResult retried = backend().claim(request);
      assertThat(((ClaimResult.Won) retried).claim().fence()).isEqualTo(2);
      assertThat(backend().inspect(key).orElseThrow().fence()).isEqualTo(2);
    }
  }

  @Nested
  @DisplayName("purgeExpired")
  class Purge {

    @Test
    @DisplayName("deletes only expired entities, in batches of 25, honouring the limit")
    void deletes_only_expired_entities_in_batches() {
      DatastoreFixture f = isolatedFixture(b -> b);
      DatastoreLockBackend b = f.backend();
      List<String> expired = new ArrayList<>();
      for (int i = 0; i < 60; i++) {
        String k = "expired-" + i;
        b.complete(((ClaimResult.Won) b.claim(request(k))).claim(), Duration.ofMinutes(1));
        expired.add(k);
      }
      List<String> kept = new ArrayList<>();
      for (int i = 0; i < 2; i++) {
        String done = "live-done-" + i;
        b.complete(((ClaimResult.Won) b.claim(request(done))).claim(), TTL);
        String claimed = "lapsed-lease-" + i;
        b.claim(request(claimed)); // lease lapses, its 2 h retention does not
        kept.add(done);
        kept.add(claimed);
      }
      f.advanceClock(Duration.ofMinutes(2));

      RpcCounters.Snapshot before = b.rpcCounts();
      assertThat(b.purgeExpired(30)).isEqualTo(30);
      // One query, then batches of 25 and 5, each a transaction that re-reads and deletes.
      assertThat(b.rpcCounts().minus(before)).isEqualTo(new RpcCounters.Snapshot(2, 2, 2, 0, 1));

      before = b.rpcCounts();
      assertThat(b.purgeExpired(1000)).isEqualTo(30);
      assertThat(b.rpcCounts().minus(before)).isEqualTo(new RpcCounters.Snapshot(2, 2, 2, 0, 1));
      assertThat(b.purgeExpired(1000)).isZero();

      for (String k : expired) {
        assertThat(b.inspect(k)).as(k).isEmpty();
      }
      for (String k : kept) {
        assertThat(b.inspect(k)).as(k).isPresent();
      }
    }

    @Test
    @DisplayName("a record renewed between the query and the delete is kept (re-checked)")
    void a_record_renewed_after_the_query_is_kept() {
      DatastoreFixture f = isolatedFixture(b -> b);
      DatastoreLockBackend b = f.backend();
      b.complete(
          ((ClaimResult.Won) b.claim(request("stays-expired"))).claim(), Duration.ofMinutes(1));
      b.complete(((ClaimResult.Won) b.claim(request("renewed"))).claim(), Duration.ofMinutes(1));
      f.advanceClock(Duration.ofMinutes(2));
      // Both were expired when a purge would have queried; then a new delivery claims one.
      List<Key> candidates = List.of(b.keyOf("stays-expired"), b.keyOf("renewed"));
      assertThat(b.claim(request("renewed"))).isInstanceOf(ClaimResult.Won.class);
      assertThat(b.purgeBatch(candidates)).isEqualTo(1);
      assertThat(b.inspect("stays-expired")).isEmpty();
      assertThat(b.inspect("renewed").orElseThrow().fence()).isEqualTo(2);
    }

    @Test
    @DisplayName("with expiresAt unindexed, purge scans the kind and still deletes only expired")
    void unindexed_expires_at_scans_the_kind() {
      DatastoreFixture f = isolatedFixture(b -> b.indexExpiresAt(false));
      DatastoreLockBackend b = f.backend();
      for (int i = 0; i < 3; i++) {
        b.complete(((ClaimResult.Won) b.claim(request("old-" + i))).claim(), Duration.ofMinutes(1));
      }
      b.complete(((ClaimResult.Won) b.claim(request("new"))).claim(), TTL);
      f.advanceClock(Duration.ofMinutes(2));
      assertThat(b.purgeExpired(100)).isEqualTo(3);
      assertThat(b.inspect("new")).isPresent();
      assertThat(b.inspect("old-0")).isEmpty();
    }
  }

  @Nested
  @DisplayName("keys")
  class Keys {

    @Test
    @DisplayName("keys of the reserved form __*__ or starting with ~ round-trip (escaped names)")
    void reserved_and_escape_keys_round_trip() {
      String id = UUID.randomUUID().toString();
      List<String> keys =
          List.of(
              "__" + id + "__",
              "__" + id + "\n__",
              "~" + id,
              "~~" + id,
              "__",
              "_" + id + "_",
              "nul\u0000" + id);
      for (String key : keys) {
        Claim c = ((ClaimResult.Won) backend().claim(request(key))).claim();
        assertThat(c.key()).isEqualTo(key);
        assertThat(backend().complete(c, TTL)).isTrue();
        assertThat(backend().inspect(key).orElseThrow().key()).isEqualTo(key);
        assertThat(backend().claim(request(key))).isInstanceOf(ClaimResult.AlreadyDone.class);
      }
      // Escaped and verbatim keys never collide.
      assertThat(backend().inspect("~__" + id + "__")).isEmpty();
      assertThat(backend().inspect(id)).isEmpty();
    }

    @Test
    @DisplayName("a 1,499-byte key that needs escaping is stored (a 1,500-byte name)")
    void longest_escaped_key_fits_the_name_limit() {
      String key = "__" + "é".repeat(300) + "x".repeat(1499 - 4 - 600) + "__";
      assertThat(LockKeysLength.of(key)).isEqualTo(1499);
      Claim c = ((ClaimResult.Won) backend().claim(request(key))).claim();
      assertThat(backend().complete(c, TTL)).isTrue();
      assertThat(backend().inspect(key).orElseThrow().key()).isEqualTo(key);
    }

    @Test
    @DisplayName("a 1,500-byte key is rejected before any RPC, naming the limit")
    void over_long_key_is_rejected_before_io() {
      RpcCounters.Snapshot before = backend().rpcCounts();
      String key = "k".repeat(1500);
      assertThatThrownBy(() -> backend().claim(request(key)))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("1500 UTF-8 bytes")
          .hasMessageContaining("limit is 1499");
      assertThatThrownBy(() -> backend().inspect(key)).isInstanceOf(IllegalArgumentException.class);
      assertThat(backend().rpcCounts()).isEqualTo(before);
    }
  }

  @Nested
  @DisplayName("entity layout")
  class Layout {

    @Test
    @DisplayName("one entity per key; expiresAt is an indexed TIMESTAMP, the rest unindexed")
    void entity_layout_suits_a_ttl_policy() throws Exception {
      String key = newKey("layout");
      Claim c =
          ((ClaimResult.Won)
                  backend()
                      .claim(
                          new ClaimRequest(
                              key, LEASE, Duration.ofHours(2), "token-1", "sha256:ab")))
              .claim();
      Datastore raw = emulator.newClient(fixture.settings().namespace());
      try {
        Entity e =
            raw.get(raw.newKeyFactory().setKind(DatastoreLockSettings.DEFAULT_KIND).newKey(key));
        assertThat(e).isNotNull();
        assertThat(e.getNames())
            .containsExactlyInAnyOrder(
                "state", "fence", "leaseExpiry", "expiresAt", "claimToken", "fingerprint");
        assertThat(e.getValue("expiresAt").getType()).isEqualTo(ValueType.TIMESTAMP);
        assertThat(e.getValue("expiresAt").excludeFromIndexes()).isFalse();
        for (String name : List.of("state", "fence", "leaseExpiry", "claimToken", "fingerprint")) {
          assertThat(e.getValue(name).excludeFromIndexes()).as(name).isTrue();
        }
        assertThat(e.getString("state")).isEqualTo("CLAIMED");
        assertThat(e.getLong("fence")).isEqualTo(1);
        backend().release(c);
        Entity released =
            raw.get(raw.newKeyFactory().setKind(DatastoreLockSettings.DEFAULT_KIND).newKey(key));
        assertThat(released.contains("claimToken")).isFalse();
        assertThat(released.getLong("fence")).isEqualTo(2);
      } finally {
        raw.close();
      }
    }
  }

  @Nested
  @DisplayName("RPCs per verb")
  class Rpcs {

    @Test
    @DisplayName("claim, complete, release, extend, forget: begin + lookup + commit|rollback")
    void rpcs_per_verb_are_as_documented() {
      DatastoreLockBackend b = backend();
      String key = newKey("rpcs");
      RpcCounters.Snapshot s = b.rpcCounts();
      Claim c = ((ClaimResult.Won) b.claim(request(key))).claim();
      assertThat(b.rpcCounts().minus(s)).isEqualTo(new RpcCounters.Snapshot(1, 1, 1, 0, 0));

      s = b.rpcCounts();
      assertThat(b.claim(request(key))).isInstanceOf(ClaimResult.HeldByOther.class);
      assertThat(b.rpcCounts().minus(s)).isEqualTo(new RpcCounters.Snapshot(1, 1, 0, 1, 0));

      s = b.rpcCounts();
      assertThat(b.extend(c, LEASE)).isTrue();
      assertThat(b.rpcCounts().minus(s)).isEqualTo(new RpcCounters.Snapshot(1, 1, 1, 0, 0));

      s = b.rpcCounts();
      assertThat(b.complete(c, TTL)).isTrue();
      assertThat(b.rpcCounts().minus(s)).isEqualTo(new RpcCounters.Snapshot(1, 1, 1, 0, 0));

      s = b.rpcCounts();
      assertThat(b.claim(request(key))).isInstanceOf(ClaimResult.AlreadyDone.class);
      b.release(c); // DONE: no-op
      assertThat(b.rpcCounts().minus(s)).isEqualTo(new RpcCounters.Snapshot(2, 2, 0, 2, 0));

      s = b.rpcCounts();
      assertThat(b.inspect(key)).isPresent();
      assertThat(b.rpcCounts().minus(s)).isEqualTo(new RpcCounters.Snapshot(0, 1, 0, 0, 0));

      s = b.rpcCounts();
      assertThat(b.forget(key)).isTrue();
      assertThat(b.rpcCounts().minus(s)).isEqualTo(new RpcCounters.Snapshot(1, 1, 1, 0, 0));
    }

    @Test
    @DisplayName("after close, verbs fail fast with IllegalStateException")
    void closed_backend_refuses_verbs() {
      DatastoreLockBackend b = closeLater(DatastoreLockBackend.create(fixture.settings()));
      b.close();
      assertThatThrownBy(() -> b.claim(request(newKey("closed"))))
          .isInstanceOf(IllegalStateException.class)
          .hasMessageContaining("closed");
    }
  }

  /** UTF-8 length, for readable assertions. */
  static final class LockKeysLength {
    static int of(String s) {
      return dev.pubsubworker.core.LockKeys.utf8Length(s);
    }
  }
}
