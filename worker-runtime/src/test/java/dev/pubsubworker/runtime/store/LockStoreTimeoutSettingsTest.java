package dev.pubsubworker.runtime.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.inject.Module;
import com.typesafe.config.ConfigFactory;
import com.zaxxer.hikari.HikariConfig;
import dev.pubsubworker.backend.sql.SqlLockBackend;
import dev.pubsubworker.runtime.config.ConfigProblem;
import dev.pubsubworker.runtime.config.InvalidConfigException;
import dev.pubsubworker.runtime.config.LockStoreConfig;
import dev.pubsubworker.runtime.config.LockStoreType;
import dev.pubsubworker.runtime.config.SqlStoreConfig;
import dev.pubsubworker.runtime.config.WorkerConfig;
import java.time.Duration;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/**
 * {@code lock-store.sql.statement-timeout}, {@code socket-timeout} and {@code connect-timeout}:
 * their defaults, how they reach the backend, the pool and the driver, and what is refused; and
 * {@code observability.lock-store-stuck-after}, the liveness bound on a store call.
 */
class LockStoreTimeoutSettingsTest {

  private static WorkerConfig config(String sql) {
    String hocon =
        """
        pubsub-worker {
          project-id = "p"
          lock-store.type = sql
          lock-store.sql { %s }
          subscriptions { a { name = "a", handler = "h" } }
        }
        """
            .formatted(sql);
    return WorkerConfig.load(
        ConfigFactory.parseString(hocon).withFallback(ConfigFactory.defaultReference()).resolve());
  }

  @Test
  void the_defaults_come_from_reference_conf_and_reach_the_backend() {
    WorkerConfig c = config("jdbc-url = \"jdbc:h2:mem:timeouts-defaults;DB_CLOSE_DELAY=-1\"");
    SqlStoreConfig sql = c.lockStore().sql();
    assertThat(sql.statementTimeout()).isEqualTo(Duration.ofSeconds(5));
    assertThat(sql.socketTimeout()).isEqualTo(Duration.ofSeconds(7));
    assertThat(sql.connectTimeout()).isEqualTo(Duration.ofSeconds(5));
    try (LockStore store = LockStore.of(c)) {
      SqlLockBackend backend = (SqlLockBackend) store.backend();
      assertThat(backend.settings().statementTimeout()).isEqualTo(Duration.ofSeconds(5));
      assertThat(backend.settings().socketTimeout()).isEqualTo(Duration.ofSeconds(7));
    }
  }

  @Test
  void the_liveness_bound_on_a_store_call_defaults_to_60s_and_must_be_positive() {
    WorkerConfig c = config("jdbc-url = \"jdbc:h2:mem:x\"");
    assertThat(c.observability().lockStoreStuckAfter()).isEqualTo(Duration.ofSeconds(60));
    String hocon =
        """
        pubsub-worker {
          project-id = "p"
          observability.lock-store-stuck-after = 0s
          subscriptions { a { name = "a", handler = "h" } }
        }
        """;
    assertThatThrownBy(
            () ->
                WorkerConfig.load(
                    ConfigFactory.parseString(hocon)
                        .withFallback(ConfigFactory.defaultReference())
                        .resolve()))
        .isInstanceOfSatisfying(
            InvalidConfigException.class,
            e ->
                assertThat(e.problems())
                    .extracting(ConfigProblem::path)
                    .containsExactly("pubsub-worker.observability.lock-store-stuck-after"));
  }

  @Test
  void configured_values_reach_the_backend() {
    WorkerConfig c =
        config(
            "jdbc-url = \"jdbc:h2:mem:timeouts-set;DB_CLOSE_DELAY=-1\", statement-timeout = 2s,"
                + " socket-timeout = 3s");
    try (LockStore store = LockStore.of(c)) {
      SqlLockBackend backend = (SqlLockBackend) store.backend();
      assertThat(backend.settings().statementTimeout()).isEqualTo(Duration.ofSeconds(2));
      assertThat(backend.settings().socketTimeout()).isEqualTo(Duration.ofSeconds(3));
    }
  }

  @Test
  void the_pool_and_the_driver_get_the_timeouts_in_their_own_units() {
    HikariConfig pg = new HikariConfig();
    SqlStoreModule.applyTimeouts(pg, sql("jdbc:postgresql://db:5432/app", 5_000, 7_500, 3_000));
    assertThat(pg.getConnectionTimeout()).isEqualTo(3_000);
    assertThat(pg.getValidationTimeout()).isEqualTo(3_000);
    assertThat(pg.getDataSourceProperties())
        .containsEntry("connectTimeout", "3")
        .containsEntry("loginTimeout", "3")
        .containsEntry("socketTimeout", "8")
        .containsEntry("cancelSignalTimeout", "3");

    HikariConfig maria = new HikariConfig();
    SqlStoreModule.applyTimeouts(maria, sql("jdbc:mariadb://db:3306/app", 5_000, 7_500, 3_000));
    assertThat(maria.getDataSourceProperties())
        .containsEntry("connectTimeout", "3000")
        .containsEntry("socketTimeout", "7500")
        .hasSize(2);
    HikariConfig mysql = new HikariConfig();
    SqlStoreModule.applyTimeouts(mysql, sql("jdbc:mysql://db:3306/app", 5_000, 7_500, 3_000));
    assertThat(mysql.getDataSourceProperties()).isEqualTo(maria.getDataSourceProperties());

    HikariConfig h2 = new HikariConfig();
    SqlStoreModule.applyTimeouts(h2, sql("jdbc:h2:mem:x", 5_000, 7_000, 100));
    assertThat(h2.getDataSourceProperties()).isEqualTo(new Properties());
    assertThat(h2.getConnectionTimeout()).as("Hikari's floor").isEqualTo(250);
  }

  @Test
  void values_the_backend_refuses_are_config_problems_naming_the_setting() {
    // The config reader refuses these values first; hand-made store configs reach the backend's
    // own checks, which must surface as config problems too.
    assertThatThrownBy(() -> sqlModule(sql("jdbc:h2:mem:x", 500, 7_000, 1_000)))
        .isInstanceOfSatisfying(
            InvalidConfigException.class,
            e ->
                assertThat(e.problems())
                    .extracting(ConfigProblem::toString)
                    .containsExactly(
                        "pubsub-worker.lock-store.sql.statement-timeout: statementTimeout must be"
                            + " between PT1S and PT1H, but was PT0.5S"));
    assertThatThrownBy(() -> sqlModule(sql("jdbc:h2:mem:x", 10_000, 5_000, 1_000)))
        .isInstanceOfSatisfying(
            InvalidConfigException.class,
            e ->
                assertThat(e.problems())
                    .extracting(ConfigProblem::toString)
                    .containsExactly(
                        "pubsub-worker.lock-store.sql: socketTimeout must not be shorter than"
                            + " statementTimeout (10000ms), but was 5000ms"));
    assertThatThrownBy(() -> config("connect-timeout = 0s"))
        .isInstanceOfSatisfying(
            InvalidConfigException.class,
            e ->
                assertThat(e.problems())
                    .extracting(ConfigProblem::path)
                    .containsExactly("pubsub-worker.lock-store.sql.connect-timeout"));
  }

  private static Module sqlModule(SqlStoreConfig sql) {
    return LockStoreModules.forConfig(
        new LockStoreConfig(LockStoreType.SQL, null, sql, null), "project");
  }

  private static SqlStoreConfig sql(String url, long statement, long socket, long connect) {
    return new SqlStoreConfig(
        url,
        "",
        "",
        "t",
        false,
        2,
        Duration.ofMillis(statement),
        Duration.ofMillis(socket),
        Duration.ofMillis(connect),
        java.util.Map.of());
  }
}
