package dev.pubsubworker.runtime.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.pubsubworker.core.LockState;
import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.runtime.testing.WorkerHarness;
import dev.pubsubworker.runtime.worker.Worker;
import dev.pubsubworker.testservices.SqlDatabase;
import dev.pubsubworker.testservices.SubscriptionSpec;
import dev.pubsubworker.testservices.TestServices;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A transactional subscription on PostgreSQL: the handler writes its own row through the connection
 * of the transaction that also writes DONE, so the two commit or roll back together.
 */
class TransactionalEndToEndTest {

  private static int rows(SqlDatabase db, String table, String id) throws SQLException {
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement s =
            c.prepareStatement("SELECT count(*) FROM " + table + " WHERE id = ?")) {
      s.setString(1, id);
      try (ResultSet r = s.executeQuery()) {
        r.next();
        return r.getInt(1);
      }
    }
  }

  @Test
  void the_handlers_row_and_done_commit_together_and_a_failed_run_leaves_neither()
      throws Exception {
    SqlDatabase db = TestServices.postgres();
    String orders = TestServices.uniqueName("orders");
    String locks = TestServices.uniqueName("locks");
    try (Connection c = db.dataSource().getConnection();
        Statement s = c.createStatement()) {
      s.execute("CREATE TABLE " + orders + " (id text PRIMARY KEY, fence bigint NOT NULL)");
    }
    AtomicInteger flakyRuns = new AtomicInteger();
    RecordingHandler handler =
        new RecordingHandler()
            .behave(
                (m, ctx, call) -> {
                  Connection tx = ctx.resource(Connection.class).orElseThrow();
                  try (PreparedStatement insert =
                      tx.prepareStatement("INSERT INTO " + orders + " (id, fence) VALUES (?, ?)")) {
                    insert.setString(1, m.attribute("id").orElseThrow());
                    insert.setLong(2, ctx.fencingToken().orElseThrow());
                    insert.executeUpdate();
                  }
                  if (m.attribute("fail").isPresent() && flakyRuns.incrementAndGet() <= 2) {
                    // The row was written in the transaction; throwing rolls it back with DONE.
                    throw new IllegalStateException("payment provider refused");
                  }
                });
    OutcomeRecorder outcomes = new OutcomeRecorder();
    String store =
        """
        pubsub-worker.lock-store {
          type = sql
          sql { jdbc-url = "%s", user = "%s", password = "%s", table = %s, create-table = true }
        }
        """
            .formatted(db.jdbcUrl(), db.user(), db.password(), locks);
    try (WorkerHarness h = new WorkerHarness(SubscriptionSpec.defaults())) {
      Worker worker =
          h.create(
              "key = \"template:orders:{id}\"\ntransactional = true",
              store,
              handler,
              List.of(outcomes));
      worker.start();
      h.publish("ok", Map.of("id", "po-1"));
      await().atMost(Duration.ofSeconds(60)).until(() -> outcomes.count(Outcome.PROCESSED) == 1);
      assertThat(rows(db, orders, "po-1")).isEqualTo(1);
      assertThat(worker.admin().inspect("test:orders:po-1").orElseThrow().state())
          .isEqualTo(LockState.DONE);

      // A republish of the same order is a duplicate: no second row.
      h.publish("ok again", Map.of("id", "po-1"));
      await().atMost(Duration.ofSeconds(60)).until(() -> outcomes.count(Outcome.DUPLICATE) == 1);
      assertThat(rows(db, orders, "po-1")).isEqualTo(1);

      // Two failed runs roll their row back each time; the third commits row and DONE together.
      h.publish("flaky", Map.of("id", "po-2", "fail", "yes"));
      await().atMost(Duration.ofSeconds(60)).until(() -> outcomes.count(Outcome.PROCESSED) == 2);
      assertThat(outcomes.count(Outcome.FAILED)).isEqualTo(2);
      assertThat(rows(db, orders, "po-2")).isEqualTo(1);
      assertThat(worker.admin().inspect("test:orders:po-2").orElseThrow().state())
          .isEqualTo(LockState.DONE);
    } finally {
      try (Connection c = db.dataSource().getConnection();
          Statement s = c.createStatement()) {
        s.execute("DROP TABLE IF EXISTS " + orders);
        s.execute("DROP TABLE IF EXISTS " + locks);
      }
    }
  }
}
