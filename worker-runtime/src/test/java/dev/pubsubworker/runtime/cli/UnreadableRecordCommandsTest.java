package dev.pubsubworker.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.store.LockStore;
import dev.pubsubworker.testservices.SqlDatabase;
import dev.pubsubworker.testservices.TestServices;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code inspect} and {@code forget} on a record the store's backend cannot read (issue: a MariaDB
 * row in state 'X' made both fail with "No enum constant", exit 2, and Redis refused to forget a
 * junk hash): inspect shows it as stored and exits 0, forget removes it, and the key works again.
 */
class UnreadableRecordCommandsTest {

  private static final String KEY = "orders:po-9";

  @TempDir Path dir;

  @Test
  void a_mariadb_row_in_an_unknown_state_is_shown_as_stored_and_forgotten() throws Exception {
    SqlDatabase maria = TestServices.mariadb();
    String table = TestServices.uniqueName("unreadable");
    Path config =
        config(
            "type = sql, sql { jdbc-url = \"%s\", user = \"%s\", password = \"%s\", table = %s }"
                .formatted(maria.jdbcUrl(), maria.user(), maria.password(), table));
    // The store creates its table; then a row in a state no worker writes, as in the issue.
    assertThat(CliRun.of("inspect", KEY, "--config", config.toString()).exitCode()).isZero();
    try (Connection c = maria.dataSource().getConnection()) {
      try (PreparedStatement insert =
          c.prepareStatement(
              "INSERT INTO "
                  + table
                  + " (lock_key, state, fence, lease_expiry, expires_at, claim_token)"
                  + " VALUES (?, 'X', 7, 1700000000000, 4102444800000, 'raw-token')")) {
        insert.setBytes(1, KEY.getBytes(StandardCharsets.UTF_8));
        insert.executeUpdate();
      }
      try {
        inspectShowsItAndForgetRemovesIt(config, "\"state\":\"X\",\"fence\":\"7\"");
      } finally {
        try (Statement st = c.createStatement()) {
          st.execute("DROP TABLE " + table);
        }
      }
    }
  }

  @Test
  void a_redis_hash_in_an_unknown_state_is_shown_as_stored_and_forgotten() throws Exception {
    String prefix = TestServices.uniqueName("unreadable") + ":";
    Path config =
        config(
            "type = redis, redis { uri = \"%s\", key-prefix = \"%s\" }"
                .formatted(TestServices.redis().uri(), prefix));
    RedisClient client = RedisClient.create(TestServices.redis().uri());
    try (StatefulRedisConnection<String, String> c = client.connect()) {
      c.sync()
          .hset(
              prefix + KEY,
              Map.of(
                  "state", "X",
                  "fence", "7",
                  "leaseExpiry", "1700000000000",
                  "expiresAt", "4102444800000",
                  "claimToken", "raw-token"));
      inspectShowsItAndForgetRemovesIt(config, "\"state\":\"X\"");
      c.sync().del(prefix + KEY);
    } finally {
      client.shutdown();
    }
  }

  private void inspectShowsItAndForgetRemovesIt(Path config, String storedJson)
      throws SQLException {
    CliRun human = CliRun.of("inspect", KEY, "--config", config.toString());
    assertThat(human.exitCode()).as(human.err()).isZero();
    assertThat(human.out())
        .contains("key:          " + KEY)
        .contains("UNREADABLE:   state 'X' is neither CLAIMED nor DONE")
        .contains("state = \"X\"")
        .contains("fence = \"7\"")
        .contains("expiresAt = \"4102444800000\" (2100-01-01T00:00:00Z)")
        .contains("until the record is removed (forget KEY");
    CliRun json = CliRun.of("inspect", KEY, "--json", "--config", config.toString());
    assertThat(json.exitCode()).isZero();
    assertThat(json.out())
        .startsWith(
            "{\"key\":\""
                + KEY
                + "\",\"readable\":false,\"problem\":\"state 'X' is neither CLAIMED nor DONE\","
                + "\"stored\":{")
        .contains(storedJson);

    CliRun forget = CliRun.of("forget", KEY, "--yes", "--config", config.toString());
    assertThat(forget.exitCode()).as(forget.err()).isZero();
    assertThat(forget.out())
        .contains("UNREADABLE:")
        .contains("forgotten: the next delivery for this key runs again");
    assertThat(CliRun.of("inspect", KEY, "--config", config.toString()).out())
        .contains("no record for this key");
    try (LockStore store =
        LockStore.of(WorkerConfig.loadFile(config, getClass().getClassLoader()))) {
      assertThat(store.admin().inspect(KEY)).isEmpty();
    }
  }

  private Path config(String lockStore) throws IOException {
    Path file = dir.resolve("worker.conf");
    Files.writeString(
        file,
        """
        pubsub-worker {
          project-id = "p"
          lock-store { %s }
          subscriptions { orders { handler = orders } }
        }
        """
            .formatted(lockStore));
    return file;
  }
}
