package dev.pubsubworker.backend.sql;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class SqlErrorsTest {

  @Test
  @DisplayName("serialization failures, deadlocks and lock timeouts are transient")
  void transient_states() {
    assertThat(SqlErrors.isTransient(new SQLException("serialization", "40001"))).isTrue();
    assertThat(SqlErrors.isTransient(new SQLException("pg deadlock", "40P01"))).isTrue();
    assertThat(SqlErrors.isTransient(new SQLException("pg lock timeout", "55P03"))).isTrue();
    assertThat(SqlErrors.isTransient(new SQLException("h2 lock timeout", "HYT00", 50200))).isTrue();
    assertThat(SqlErrors.isTransient(new SQLException("mysql deadlock", "40001", 1213))).isTrue();
    assertThat(SqlErrors.isTransient(new SQLException("mysql lock wait", "HY000", 1205))).isTrue();
  }

  @Test
  @DisplayName("connection loss, syntax errors and constraint violations are not transient")
  void non_transient_states() {
    assertThat(SqlErrors.isTransient(new SQLException("connection", "08006"))).isFalse();
    assertThat(SqlErrors.isTransient(new SQLTransientConnectionException("pool timeout", "08001")))
        .isFalse();
    assertThat(SqlErrors.isTransient(new SQLException("syntax", "42601"))).isFalse();
    assertThat(SqlErrors.isTransient(new SQLException("no state"))).isFalse();
    assertThat(SqlErrors.isTransient(new SQLException("duplicate", "23505"))).isFalse();
  }

  @Test
  @DisplayName("a transient cause or chained exception counts")
  void causes_and_chains_are_walked() {
    SQLException wrapped = new SQLException("wrapper", "XX000", new SQLException("d", "40P01"));
    assertThat(SqlErrors.isTransient(wrapped)).isTrue();
    SQLException chained = new SQLException("batch", "XX000");
    chained.setNextException(new SQLException("d", "40001"));
    assertThat(SqlErrors.isTransient(chained)).isTrue();
    SQLException viaRuntime =
        new SQLException("x", "XX000", new RuntimeException(new SQLException("t", "55P03")));
    assertThat(SqlErrors.isTransient(viaRuntime)).isTrue();
  }

  @Test
  @DisplayName(
      "refusals: data exceptions and constraint violations, not a unique-key race, not a lost"
          + " connection or a timeout")
  void refusals() {
    assertThat(SqlErrors.isRefusal(new SQLException("pg check", "23514"))).isTrue();
    assertThat(SqlErrors.isRefusal(new SQLException("h2 check", "23513"))).isTrue();
    assertThat(SqlErrors.isRefusal(new SQLException("mariadb check", "23000", 4025))).isTrue();
    assertThat(SqlErrors.isRefusal(new SQLException("too long", "22001"))).isTrue();
    assertThat(
            SqlErrors.isRefusal(
                new SQLException("wrapper", "XX000", new SQLException("c", "23502"))))
        .isTrue();
    assertThat(SqlErrors.isRefusal(new SQLException("pg race", "23505"))).isFalse();
    assertThat(SqlErrors.isRefusal(new SQLException("mysql race", "23000", 1062))).isFalse();
    assertThat(SqlErrors.isRefusal(new SQLException("connection", "08006"))).isFalse();
    assertThat(SqlErrors.isRefusal(new SQLException("statement timeout", "57014"))).isFalse();
    assertThat(SqlErrors.isRefusal(new SQLException("no state"))).isFalse();
  }

  @Test
  @DisplayName("duplicate keys: 23505, or 23000 with MySQL's 1062 (not other 23000s)")
  void duplicate_keys() {
    assertThat(SqlErrors.isDuplicateKey(new SQLException("pg/h2", "23505"))).isTrue();
    assertThat(SqlErrors.isDuplicateKey(new SQLException("mysql", "23000", 1062))).isTrue();
    assertThat(SqlErrors.isDuplicateKey(new SQLException("not null", "23000", 1048))).isFalse();
    assertThat(SqlErrors.isDuplicateKey(new SQLException("check", "23514"))).isFalse();
  }
}
