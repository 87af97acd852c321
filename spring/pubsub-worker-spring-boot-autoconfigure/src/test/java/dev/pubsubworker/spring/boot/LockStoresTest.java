package dev.pubsubworker.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pubsubworker.backend.datastore.DatastoreLockBackend;
import dev.pubsubworker.backend.memory.InMemoryLockBackend;
import dev.pubsubworker.backend.redis.RedisLockBackend;
import dev.pubsubworker.backend.sql.SqlLockBackend;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.spring.boot.PubSubWorkerProperties.LockStoreType;
import dev.pubsubworker.testservices.SqlDatabase;
import dev.pubsubworker.testservices.TestServices;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * Each kind of lock store from its {@code pubsub-worker.lock-store} settings, against the real
 * store where one is needed, and the start-up error for each kind of mistake: it names the
 * property, and never shows a URI's password.
 */
class LockStoresTest {

  private final PubSubWorkerProperties properties = new PubSubWorkerProperties();
  private final OwnedResources owned = new OwnedResources();
  private LockBackend created;

  @AfterEach
  void close() {
    if (created != null) {
      created.close();
    }
    owned.close();
  }

  private LockBackend create(DataSource dataSource) {
    created =
        LockStores.create(
            properties,
            name -> {
              if (dataSource == null) {
                throw new IllegalStateException("no DataSource in this test");
              }
              return dataSource;
            },
            () -> "lock-stores-test",
            owned);
    return created;
  }

  private LockBackend create() {
    return create(null);
  }

  @Test
  void without_a_type_the_start_fails_naming_the_choices() {
    assertThatThrownBy(this::create)
        .isInstanceOf(InvalidConfigurationPropertyValueException.class)
        .hasMessageContaining("pubsub-worker.lock-store.type")
        .hasMessageContaining("redis, sql, datastore or in-memory");
  }

  @Test
  void in_memory() {
    properties.getLockStore().setType(LockStoreType.IN_MEMORY);
    assertThat(create()).isInstanceOf(InMemoryLockBackend.class);
  }

  @Test
  void redis_from_its_settings_claims_on_the_real_server() {
    String prefix = TestServices.uniqueName("spring_redis") + ":";
    properties.getLockStore().setType(LockStoreType.REDIS);
    properties.getLockStore().getRedis().setUri(TestServices.redis().uri());
    properties.getLockStore().getRedis().setKeyPrefix(prefix);
    properties.getLockStore().getRedis().setCommandTimeout(Duration.ofSeconds(2));
    LockBackend backend = create();
    assertThat(backend).isInstanceOf(RedisLockBackend.class);
    assertThat(((RedisLockBackend) backend).settings().keyPrefix()).isEqualTo(prefix);
    assertThat(backend.claim(ClaimRequest.of("k", Duration.ofSeconds(5), "t")))
        .isInstanceOf(ClaimResult.Won.class);
  }

  @Test
  void a_bad_redis_setting_names_its_property_and_hides_the_uri() {
    properties.getLockStore().setType(LockStoreType.REDIS);
    properties.getLockStore().getRedis().setUri("http://user:s3cret@redis:6379");
    assertThatThrownBy(this::create)
        .isInstanceOf(InvalidConfigurationPropertyValueException.class)
        .hasMessageContaining("pubsub-worker.lock-store.redis.uri")
        .hasMessageNotContaining("s3cret");

    properties.getLockStore().getRedis().setUri(null);
    properties.getLockStore().getRedis().setKeyPrefix("has {braces}");
    assertThatThrownBy(this::create)
        .isInstanceOf(InvalidConfigurationPropertyValueException.class)
        .hasMessageContaining("pubsub-worker.lock-store.redis.key-prefix");
  }

  @Test
  void sql_on_the_applications_data_source() throws SQLException {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:mem:" + TestServices.uniqueName("spring_sql") + ";DB_CLOSE_DELAY=-1");
    String table = TestServices.uniqueName("locks");
    properties.getLockStore().setType(LockStoreType.SQL);
    properties.getLockStore().getSql().setTable(table);
    properties.getLockStore().getSql().setCreateTable(true);
    LockBackend backend = create(h2);
    assertThat(backend).isInstanceOf(SqlLockBackend.class);
    assertThat(backend.claim(ClaimRequest.of("k", Duration.ofSeconds(5), "t")))
        .isInstanceOf(ClaimResult.Won.class);
    try (Connection c = h2.getConnection()) {
      assertThat(c.getMetaData().getTables(null, null, table.toUpperCase(), null).next())
          .as("the table was created in the application's database")
          .isTrue();
    }
  }

  @Test
  void sql_with_a_url_opens_a_pool_of_its_own_on_the_real_database_and_closes_it() {
    SqlDatabase postgres = TestServices.postgres();
    properties.getLockStore().setType(LockStoreType.SQL);
    properties.getLockStore().getSql().setUrl(postgres.jdbcUrl());
    properties.getLockStore().getSql().setUsername(postgres.user());
    properties.getLockStore().getSql().setPassword(postgres.password());
    properties.getLockStore().getSql().setTable(TestServices.uniqueName("spring_locks"));
    properties.getLockStore().getSql().setCreateTable(true);
    properties.getLockStore().getSql().setMaximumPoolSize(2);
    LockBackend backend = create();
    assertThat(((SqlLockBackend) backend).dialect().name()).isEqualTo("POSTGRESQL");
    assertThat(backend.claim(ClaimRequest.of("k", Duration.ofSeconds(5), "t")))
        .isInstanceOf(ClaimResult.Won.class);
    com.zaxxer.hikari.HikariDataSource pool =
        (com.zaxxer.hikari.HikariDataSource)
            ((SqlLockBackend) backend).settings().dataSource().orElseThrow();
    owned.close();
    assertThat(pool.isClosed()).as("the store's own pool closes with the context").isTrue();
  }

  @Test
  void sql_settings_that_contradict_each_other_are_refused() {
    properties.getLockStore().setType(LockStoreType.SQL);
    properties.getLockStore().getSql().setUsername("app");
    assertThatThrownBy(this::create)
        .hasMessageContaining("pubsub-worker.lock-store.sql.username")
        .hasMessageContaining("set url too");

    properties.getLockStore().getSql().setUsername(null);
    properties.getLockStore().getSql().setUrl("jdbc:h2:mem:x");
    properties.getLockStore().getSql().setDataSource("other");
    assertThatThrownBy(this::create)
        .hasMessageContaining("pubsub-worker.lock-store.sql.data-source")
        .hasMessageContaining("not both");

    properties.getLockStore().getSql().setDataSource(null);
    properties.getLockStore().getSql().setTable("drop table x");
    assertThatThrownBy(this::create).hasMessageContaining("pubsub-worker.lock-store.sql.table");

    properties.getLockStore().getSql().setTable(null);
    properties.getLockStore().getSql().setDialect("oracle");
    assertThatThrownBy(this::create)
        .hasMessageContaining("pubsub-worker.lock-store.sql.dialect")
        .hasMessageContaining("postgresql, mariadb, mysql or h2");
  }

  @Test
  void datastore_from_its_settings_makes_no_call_until_used() {
    properties.getLockStore().setType(LockStoreType.DATASTORE);
    properties.getLockStore().getDatastore().setEmulatorHost("127.0.0.1:1");
    properties.getLockStore().getDatastore().setKind("SpringLock");
    LockBackend backend = create();
    assertThat(backend).isInstanceOf(DatastoreLockBackend.class);
    assertThat(backend.toString()).contains("SpringLock");

    properties.getLockStore().getDatastore().setEmulatorHost("no port");
    assertThatThrownBy(this::create)
        .hasMessageContaining("pubsub-worker.lock-store.datastore.emulator-host");
  }
}
