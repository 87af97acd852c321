package dev.pubsubworker.backend.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pubsubworker.core.Backoff;
import java.time.Duration;
import java.util.List;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class SqlLockSettingsTest {

  @Test
  @DisplayName("a transient retry waits below 10 ms doubling to 640 ms, with full jitter")
  void transient_retry_backoff_keeps_its_bounds() {
    Backoff b = LockTable.TRANSIENT_RETRY_BACKOFF;
    assertThat(b.jitter()).isEqualTo(Backoff.Jitter.FULL);
    assertThat(b.ceiling(0)).isEqualTo(Duration.ofMillis(10));
    assertThat(b.ceiling(1)).isEqualTo(Duration.ofMillis(20));
    assertThat(b.ceiling(6)).isEqualTo(Duration.ofMillis(640));
    assertThat(b.ceiling(MAX_RETRIES)).isEqualTo(Duration.ofMillis(640));
    assertThat(b.withRandom(() -> 0.5).delay(2)).isEqualTo(Duration.ofMillis(20));
    // The most a verb can wait in all at the settings' limit of retries.
    assertThat(b.maxTotal(MAX_RETRIES)).isEqualTo(Duration.ofMillis(10 * 127 + 640 * 3));
  }

  private static final int MAX_RETRIES = SqlLockSettings.MAX_TRANSIENT_RETRIES;

  @Test
  @DisplayName(
      "defaults: no data source, the default table, dialect detected, no auto-create, 3 retries")
  void defaults() {
    SqlLockSettings s = SqlLockSettings.defaults();
    assertThat(s.dataSource()).isEmpty();
    assertThat(s.table()).isEqualTo("pubsub_worker_locks");
    assertThat(s.dialect()).isEmpty();
    assertThat(s.createTableIfMissing()).isFalse();
    assertThat(s.transientRetries()).isEqualTo(3);
    assertThat(s.statementTimeout()).isEqualTo(Duration.ofSeconds(5));
    assertThat(s.socketTimeout()).isEqualTo(Duration.ofSeconds(7));
    assertThat(s.clockOffsetMillis().getAsLong()).isZero();
  }

  @Test
  @DisplayName("the backend refuses settings without a data source, before any I/O")
  void create_requires_a_data_source() {
    assertThatThrownBy(() -> SqlLockBackend.create(SqlLockSettings.defaults()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "SqlLockSettings have no dataSource; set one with SqlLockSettings.Builder.dataSource");
    assertThatThrownBy(() -> SqlLockSettings.newBuilder().dataSource(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("dataSource");
  }

  @Test
  @DisplayName("plain identifiers are accepted as table names")
  void plain_identifiers_are_accepted() {
    for (String name :
        List.of("pubsub_worker_locks", "Locks_2", "_x", "l", "x".repeat(48), "selected")) {
      assertThat(SqlLockSettings.newBuilder().table(name).build().table()).isEqualTo(name);
    }
  }

  @Test
  @DisplayName("anything but a plain identifier is refused with a clear error")
  void invalid_table_names_are_refused() {
    List<String> invalid =
        List.of(
            "",
            "1locks",
            "locks-2",
            "my locks",
            "locks; DROP TABLE users",
            "locks'",
            "\"locks\"",
            "`locks`",
            "public.locks",
            "locks\u0000",
            "locks\n",
            "tåble",
            "locks--");
    for (String name : invalid) {
      assertThatThrownBy(() -> SqlLockSettings.newBuilder().table(name))
          .as("%s", name)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("plain SQL identifier");
    }
    assertThatThrownBy(() -> SqlLockSettings.newBuilder().table("x".repeat(49)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("at most 48 characters, but was 49");
    assertThatThrownBy(() -> SqlLockSettings.newBuilder().table("Select"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("reserved word");
    assertThatThrownBy(() -> SqlLockSettings.newBuilder().table(null))
        .isInstanceOf(NullPointerException.class);
  }

  @Test
  @DisplayName("the error shows control characters escaped, on one line")
  void error_message_escapes_control_characters() {
    assertThatThrownBy(() -> SqlLockSettings.newBuilder().table("a\nb\u0000"))
        .hasMessageEndingWith("'a\\u000Ab\\u0000'");
  }

  @Test
  @DisplayName("the statements refuse an invalid table name too (defence in depth)")
  void statements_refuse_invalid_table_names() {
    assertThatThrownBy(() -> new SqlStatements(SqlDialect.POSTGRESQL, "x; DROP TABLE y"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  @DisplayName("transientRetries is validated")
  void transient_retries_are_validated() {
    assertThat(SqlLockSettings.newBuilder().transientRetries(0).build().transientRetries())
        .isZero();
    assertThatThrownBy(() -> SqlLockSettings.newBuilder().transientRetries(-1))
        .hasMessage("transientRetries must be 0..10, but was -1");
    assertThatThrownBy(() -> SqlLockSettings.newBuilder().transientRetries(11))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  @DisplayName("toBuilder copies every setting")
  void to_builder_copies() {
    DataSource ds = new JdbcDataSource();
    SqlLockSettings s =
        SqlLockSettings.newBuilder()
            .dataSource(ds)
            .table("t1")
            .dialect(SqlDialect.H2)
            .createTableIfMissing(true)
            .transientRetries(5)
            .statementTimeout(Duration.ofSeconds(2))
            .socketTimeout(Duration.ofSeconds(3))
            .clockOffset(() -> 42)
            .build();
    SqlLockSettings copy = s.toBuilder().build();
    assertThat(copy.dataSource()).containsSame(ds);
    assertThat(copy.table()).isEqualTo("t1");
    assertThat(copy.dialect()).contains(SqlDialect.H2);
    assertThat(copy.createTableIfMissing()).isTrue();
    assertThat(copy.transientRetries()).isEqualTo(5);
    assertThat(copy.statementTimeout()).isEqualTo(Duration.ofSeconds(2));
    assertThat(copy.socketTimeout()).isEqualTo(Duration.ofSeconds(3));
    assertThat(copy.clockOffsetMillis().getAsLong()).isEqualTo(42);
  }

  @Test
  @DisplayName(
      "statement and socket timeouts: 1 s to 1 h, and the socket's not below the statement's")
  void timeouts_are_validated() {
    SqlLockSettings s =
        SqlLockSettings.newBuilder()
            .statementTimeout(Duration.ofMillis(1_500))
            .socketTimeout(Duration.ofSeconds(2))
            .build();
    assertThat(s.statementTimeoutSeconds()).as("JDBC's whole seconds, rounded up").isEqualTo(2);
    assertThat(s.toString()).contains("statementTimeout=PT1.5S, socketTimeout=PT2S");
    assertThat(
            SqlLockSettings.newBuilder()
                .statementTimeout(Duration.ofHours(1))
                .socketTimeout(Duration.ofHours(1))
                .build()
                .statementTimeoutSeconds())
        .isEqualTo(3600);

    assertThatThrownBy(() -> SqlLockSettings.newBuilder().statementTimeout(Duration.ofMillis(999)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("statementTimeout must be between PT1S and PT1H, but was PT0.999S");
    assertThatThrownBy(() -> SqlLockSettings.newBuilder().socketTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("socketTimeout must be between PT1S and PT1H, but was PT0S");
    assertThatThrownBy(() -> SqlLockSettings.newBuilder().socketTimeout(Duration.ofSeconds(-5)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("socketTimeout must be between PT1S and PT1H, but was PT-5S");
    assertThatThrownBy(() -> SqlLockSettings.newBuilder().statementTimeout(Duration.ofMinutes(61)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("statementTimeout must be between PT1S and PT1H, but was PT1H1M");
    assertThatThrownBy(() -> SqlLockSettings.newBuilder().statementTimeout(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("statementTimeout");
    assertThatThrownBy(
            () ->
                SqlLockSettings.newBuilder()
                    .statementTimeout(Duration.ofSeconds(10))
                    .socketTimeout(Duration.ofSeconds(5))
                    .build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "socketTimeout must not be shorter than statementTimeout (10000ms), but was 5000ms");
  }
}
