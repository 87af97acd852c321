package dev.pubsubworker.runtime.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pubsubworker.backend.memory.InMemoryLockBackend;
import dev.pubsubworker.backend.sql.SqlLockBackend;
import dev.pubsubworker.backend.sql.SqlLockSettings;
import dev.pubsubworker.core.BatchLockBackend;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.core.TransactionalLockBackend;
import dev.pubsubworker.testkit.ManualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The tracker of lock-store calls in progress, on real backends (in memory, H2). */
class LockStoreCallsTest {

  private static final Duration LEASE = Duration.ofSeconds(30);
  private static final Duration TTL = Duration.ofMinutes(5);

  private final ManualTime time = new ManualTime();
  private final LockStoreCalls calls = new LockStoreCalls(time.clock());

  @Test
  void a_call_is_in_progress_while_it_runs_and_gone_when_it_returns_or_throws() {
    InMemoryLockBackend memory = new InMemoryLockBackend(time.clock());
    List<String> seen = new ArrayList<>();
    LockBackend observed =
        calls.track(
            new LockBackend() {
              @Override
              public ClaimResult claim(ClaimRequest request) {
                LockStoreCalls.Call c = calls.oldest().orElseThrow();
                seen.add(c.verb() + " on " + c.thread() + " at " + c.started());
                return memory.claim(request);
              }

              @Override
              public boolean complete(Claim claim, Duration ttl) {
                seen.add("complete, " + calls.inProgress() + " in progress");
                throw new LockBackendException("store down (test)");
              }

              @Override
              public void release(Claim claim) {
                memory.release(claim);
              }

              @Override
              public boolean extend(Claim claim, Duration lease) {
                return memory.extend(claim, lease);
              }
            });

    ClaimResult won = observed.claim("k", LEASE, "token");
    assertThat(won).isInstanceOf(ClaimResult.Won.class);
    assertThat(calls.inProgress()).isZero();
    assertThat(calls.oldest()).isEmpty();

    Claim claim = ((ClaimResult.Won) won).claim();
    assertThatThrownBy(() -> observed.complete(claim, TTL))
        .isInstanceOf(LockBackendException.class);
    assertThat(calls.inProgress()).as("a call that threw is over too").isZero();
    assertThat(seen)
        .containsExactly(
            "claim on " + Thread.currentThread().getName() + " at " + time.clock().instant(),
            "complete, 1 in progress");
  }

  @Test
  void the_oldest_call_is_the_one_that_started_first() {
    long first = calls.begin("claim");
    time.advance(Duration.ofSeconds(3));
    long second = calls.begin("extend");
    time.advance(Duration.ofSeconds(2));
    assertThat(calls.inProgress()).isEqualTo(2);
    assertThat(calls.oldest().orElseThrow().verb()).isEqualTo("claim");
    assertThat(calls.oldest().orElseThrow().age(time.clock().instant()))
        .isEqualTo(Duration.ofSeconds(5));
    calls.end(first);
    assertThat(calls.oldest().orElseThrow().verb()).isEqualTo("extend");
    calls.end(second);
    assertThat(calls.oldest()).isEmpty();
  }

  @Test
  void a_transactional_run_counts_the_store_work_but_not_the_handler_work() throws Exception {
    try (HikariDataSource pool = h2Pool()) {
      SqlLockBackend sql = h2Backend(pool);
      LockBackend tracked = calls.track(sql);
      assertThat(tracked).isInstanceOf(TransactionalLockBackend.class);
      Claim claim = ((ClaimResult.Won) tracked.claim("tx-key", LEASE, "token")).claim();

      List<Integer> duringWork = new ArrayList<>();
      TransactionalLockBackend.Result<String> result =
          ((TransactionalLockBackend) tracked)
              .runAndComplete(
                  claim,
                  TTL,
                  connection -> {
                    duringWork.add(calls.inProgress());
                    return "done";
                  });

      assertThat(result.outcome()).isEqualTo(TransactionalLockBackend.TransactionOutcome.COMMITTED);
      assertThat(duringWork).as("the handler's work is not a store call").containsExactly(0);
      assertThat(calls.inProgress()).isZero();
    }
  }

  @Test
  void tracking_keeps_group_commit_and_its_settings() throws Exception {
    InMemoryLockBackend memory = new InMemoryLockBackend(time.clock());
    LockBackend tracked = calls.track(memory);
    assertThat(tracked).isInstanceOf(BatchLockBackend.class);
    assertThat(tracked).isNotInstanceOf(TransactionalLockBackend.class);
    BatchLockBackend batches = (BatchLockBackend) tracked;
    assertThat(batches.maxBatchSize()).isEqualTo(memory.maxBatchSize());
    assertThat(batches.maxConcurrentBatches()).isEqualTo(memory.maxConcurrentBatches());
    assertThat(batches.batchingByDefault()).isEqualTo(memory.batchingByDefault());

    try (HikariDataSource pool = h2Pool()) {
      SqlLockBackend sql = h2Backend(pool);
      LockBackend both = calls.track(sql);
      assertThat(both).isInstanceOf(TransactionalLockBackend.class);
      assertThat(both).isInstanceOf(BatchLockBackend.class);
      assertThat(((BatchLockBackend) both).maxBatchSize()).isEqualTo(sql.maxBatchSize());
      assertThat(((BatchLockBackend) both).maxConcurrentBatches())
          .isEqualTo(sql.maxConcurrentBatches());
      List<BatchLockBackend.BatchResult<ClaimResult>> won =
          ((BatchLockBackend) both)
              .claimAll(
                  List.of(
                      new ClaimRequest("tx-a", LEASE, TTL, "t1", null),
                      new ClaimRequest("tx-b", LEASE, TTL, "t2", null)));
      assertThat(won).allSatisfy(r -> assertThat(r.get()).isInstanceOf(ClaimResult.Won.class));
      assertThat(calls.inProgress()).isZero();
    }
  }

  @Test
  void a_batch_is_one_call_of_its_verb_while_it_runs() {
    InMemoryLockBackend memory = new InMemoryLockBackend(time.clock());
    List<String> seen = new ArrayList<>();
    BatchLockBackend observed =
        (BatchLockBackend)
            calls.track(
                new BatchLockBackend() {
                  @Override
                  public List<BatchResult<ClaimResult>> claimAll(List<ClaimRequest> requests) {
                    seen.add(calls.oldest().orElseThrow().verb() + " x" + calls.inProgress());
                    return memory.claimAll(requests);
                  }

                  @Override
                  public List<BatchResult<Boolean>> completeAll(List<CompleteRequest> requests) {
                    seen.add(calls.oldest().orElseThrow().verb() + " x" + calls.inProgress());
                    throw new LockBackendException("store down (test)");
                  }

                  @Override
                  public ClaimResult claim(ClaimRequest request) {
                    return memory.claim(request);
                  }

                  @Override
                  public boolean complete(Claim claim, Duration ttl) {
                    return memory.complete(claim, ttl);
                  }

                  @Override
                  public void release(Claim claim) {
                    memory.release(claim);
                  }

                  @Override
                  public boolean extend(Claim claim, Duration lease) {
                    return memory.extend(claim, lease);
                  }
                });
    List<BatchLockBackend.BatchResult<ClaimResult>> won =
        observed.claimAll(
            List.of(
                new ClaimRequest("a", LEASE, TTL, "t1", null),
                new ClaimRequest("b", LEASE, TTL, "t2", null)));
    assertThat(calls.inProgress()).isZero();
    List<BatchLockBackend.CompleteRequest> completes =
        won.stream()
            .map(
                r -> new BatchLockBackend.CompleteRequest(((ClaimResult.Won) r.get()).claim(), TTL))
            .toList();
    assertThatThrownBy(() -> observed.completeAll(completes))
        .isInstanceOf(LockBackendException.class);
    assertThat(calls.inProgress()).as("a batch that threw is over too").isZero();
    assertThat(seen).containsExactly("claim x1", "complete x1");
  }

  private static HikariDataSource h2Pool() {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl("jdbc:h2:mem:calls-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    config.setMaximumPoolSize(2);
    return new HikariDataSource(config);
  }

  private static SqlLockBackend h2Backend(HikariDataSource pool) {
    return SqlLockBackend.create(
        SqlLockSettings.newBuilder().createTableIfMissing(true).dataSource(pool).build());
  }
}
