package dev.pubsubworker.runtime.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.typesafe.config.ConfigFactory;
import com.zaxxer.hikari.HikariConfig;
import dev.pubsubworker.runtime.config.ConfigProblem;
import dev.pubsubworker.runtime.config.InvalidConfigException;
import dev.pubsubworker.runtime.config.WorkerConfig;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code lock-store.sql.hikari { }}: HikariCP settings reach the pool by HikariCP's names, the
 * worker's own settings win and cannot be given twice, and a wrong name or value is a problem that
 * names its path — all without connecting.
 */
class HikariPassThroughTest {

  private static WorkerConfig config(String sql) {
    String hocon =
        """
        pubsub-worker {
          project-id = "p"
          lock-store.type = sql
          lock-store.sql { jdbc-url = "jdbc:postgresql://db:5432/orders", %s }
          subscriptions { a { name = "a", handler = "h" } }
        }
        """
            .formatted(sql);
    return WorkerConfig.load(
        ConfigFactory.parseString(hocon).withFallback(ConfigFactory.defaultReference()).resolve());
  }

  private static List<String> problems(String sql) {
    try {
      config(sql);
    } catch (InvalidConfigException e) {
      return e.problems().stream().map(p -> p.path() + ": " + p.problem()).toList();
    }
    throw new AssertionError("no problem for: " + sql);
  }

  @Test
  void by_default_nothing_is_passed_through_and_the_pool_has_the_workers_settings() {
    WorkerConfig c = config("maximum-pool-size = 7");
    assertThat(c.lockStore().sql().hikari()).isEmpty();
    HikariConfig pool = SqlStoreModule.poolConfig(c.lockStore().sql());
    assertThat(pool.getMaximumPoolSize()).isEqualTo(7);
    assertThat(pool.getPoolName()).isEqualTo("pubsub-worker-lock-store");
    assertThat(pool.getMinimumIdle()).isEqualTo(new HikariConfig().getMinimumIdle());
  }

  @Test
  void hikari_settings_and_driver_properties_reach_the_pool_beside_the_workers_own() {
    WorkerConfig c =
        config(
            "connect-timeout = 3s, hikari { minimumIdle = 2, maxLifetime = 1800000,"
                + " autoCommit = true, dataSource.ApplicationName = orders-worker }");
    assertThat(c.lockStore().sql().hikari())
        .containsEntry("minimumIdle", "2")
        .containsEntry("maxLifetime", "1800000")
        .containsEntry("dataSource.ApplicationName", "orders-worker");
    HikariConfig pool = SqlStoreModule.poolConfig(c.lockStore().sql());
    assertThat(pool.getMinimumIdle()).isEqualTo(2);
    assertThat(pool.getMaxLifetime()).isEqualTo(1_800_000L);
    assertThat(pool.getDataSourceProperties())
        .containsEntry("ApplicationName", "orders-worker")
        .containsEntry("socketTimeout", "7"); // the worker's own driver properties stay
    assertThat(pool.getConnectionTimeout()).isEqualTo(3_000L);
    assertThat(pool.getJdbcUrl()).isEqualTo("jdbc:postgresql://db:5432/orders");
  }

  @Test
  void an_unknown_name_or_a_bad_value_is_one_problem_naming_its_path() {
    assertThat(problems("hikari { minimumIdel = 2 }"))
        .containsExactly(
            "pubsub-worker.lock-store.sql.hikari.minimumIdel: HikariCP has no setting"
                + " 'minimumIdel' (names as in HikariConfig, e.g. minimumIdle)");
    assertThat(problems("hikari { maxLifetime = 30m }"))
        .containsExactly(
            "pubsub-worker.lock-store.sql.hikari.maxLifetime: must be a whole number of"
                + " milliseconds, as HikariCP reads it, but was '30m'");
    assertThat(problems("hikari { minimumIdle = 2.5 }"))
        .containsExactly(
            "pubsub-worker.lock-store.sql.hikari.minimumIdle: must be a whole number, but was"
                + " '2.5'");
    assertThat(problems("hikari { autoCommit = maybe }"))
        .containsExactly(
            "pubsub-worker.lock-store.sql.hikari.autoCommit: must be true or false, but was"
                + " 'maybe'");
    assertThat(problems("hikari { minimumIdle = [1, 2] }"))
        .containsExactly(
            "pubsub-worker.lock-store.sql.hikari.minimumIdle: must be a string, a number or"
                + " true/false, as HikariCP reads it");
    assertThat(problems("hikari = 3"))
        .singleElement()
        .asString()
        .startsWith("pubsub-worker.lock-store.sql.hikari: ");
  }

  @Test
  void the_workers_own_settings_and_passwords_are_refused_with_where_to_set_them() {
    assertThat(problems("hikari { maximumPoolSize = 50, jdbcUrl = \"jdbc:h2:mem:x\" }"))
        .containsExactly(
            "pubsub-worker.lock-store.sql.hikari.jdbcUrl: is set from lock-store.sql.jdbc-url:"
                + " set that instead",
            "pubsub-worker.lock-store.sql.hikari.maximumPoolSize: is set from"
                + " lock-store.sql.maximum-pool-size: set that instead");
    assertThat(problems("hikari { dataSource.socketTimeout = 60 }"))
        .containsExactly(
            "pubsub-worker.lock-store.sql.hikari.dataSource.socketTimeout: is set from"
                + " lock-store.sql.socket-timeout: set that instead");
    List<String> password = problems("hikari { dataSource.password = \"s3cr3t-value\" }");
    assertThat(password)
        .containsExactly(
            "pubsub-worker.lock-store.sql.hikari.dataSource.password: a password goes in"
                + " lock-store.sql.password, which is masked in every output");
    assertThat(String.join("\n", password)).doesNotContain("s3cr3t-value");
    assertThat(problems("hikari { poolName = mine }"))
        .singleElement()
        .asString()
        .contains("is the worker's own (the pool is named pubsub-worker-lock-store");
  }

  @Test
  void problems_are_config_problems_with_their_origin() {
    assertThatThrownBy(() -> config("hikari { idleTimeot = 1 }"))
        .isInstanceOfSatisfying(
            InvalidConfigException.class,
            e ->
                assertThat(e.problems())
                    .extracting(ConfigProblem::path)
                    .containsExactly("pubsub-worker.lock-store.sql.hikari.idleTimeot"));
  }
}
