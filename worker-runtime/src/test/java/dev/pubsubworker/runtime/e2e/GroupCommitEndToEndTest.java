package dev.pubsubworker.runtime.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.pubsubworker.core.GuardListener;
import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.runtime.testing.WorkerHarness;
import dev.pubsubworker.runtime.worker.Worker;
import dev.pubsubworker.testservices.SqlDatabase;
import dev.pubsubworker.testservices.SubscriptionSpec;
import dev.pubsubworker.testservices.TestServices;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/**
 * The worker group-commits its store calls: with a backlog and several handler threads on
 * PostgreSQL (one batch of a verb in flight), concurrent claims and completes share round trips.
 * The runtime wraps the configured backend (to track calls in progress); a wrapper that hid the
 * backend's batch verbs made every call go alone, which only this level can see.
 */
class GroupCommitEndToEndTest {

  private static final int MESSAGES = 200;

  /** The guard's store calls and batches, for both verbs together. */
  private static final class Calls implements GuardListener {
    final LongAdder calls = new LongAdder();
    final LongAdder batches = new LongAdder();
    final LongAdder batched = new LongAdder();

    @Override
    public void backendCall(Verb verb, Duration latency, boolean succeeded) {
      if (verb == Verb.CLAIM || verb == Verb.COMPLETE) {
        calls.increment();
      }
    }

    @Override
    public void batch(Verb verb, int size, Duration latency, boolean succeeded) {
      batches.increment();
      batched.add(size);
    }
  }

  @Test
  void concurrent_claims_and_completes_share_round_trips() throws Exception {
    SqlDatabase db = TestServices.postgres();
    String locks = TestServices.uniqueName("locks");
    String store =
        """
        pubsub-worker.lock-store {
          type = sql
          sql { jdbc-url = "%s", user = "%s", password = "%s", table = %s, create-table = true }
        }
        """
            .formatted(db.jdbcUrl(), db.user(), db.password(), locks);
    Calls calls = new Calls();
    OutcomeRecorder outcomes = new OutcomeRecorder();
    try (WorkerHarness h = new WorkerHarness(SubscriptionSpec.defaults())) {
      for (int i = 0; i < MESSAGES; i++) {
        h.publish("m" + i, Map.of());
      }
      Worker worker =
          h.create(
              h.config("executor-threads = 8\nparallel-pull-count = 1", store),
              (message, context) -> {},
              id -> List.of(calls),
              List.of(outcomes));
      worker.start();
      await()
          .atMost(Duration.ofSeconds(90))
          .until(() -> outcomes.count(Outcome.PROCESSED) == MESSAGES);

      assertThat(calls.calls.sum()).as("claims and completes").isEqualTo(2L * MESSAGES);
      assertThat(calls.batches.sum()).as("batches sent").isPositive();
      long roundTrips = calls.calls.sum() - calls.batched.sum() + calls.batches.sum();
      assertThat(roundTrips)
          .as("round trips for %d calls", calls.calls.sum())
          .isLessThan(calls.calls.sum());
    } finally {
      try (Connection c = db.dataSource().getConnection();
          Statement s = c.createStatement()) {
        s.execute("DROP TABLE IF EXISTS " + locks);
      }
    }
  }
}
