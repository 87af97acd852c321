package dev.pubsubworker.testservices;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SqlDatabaseTest {

  static Stream<Arguments> databases() {
    return Stream.of(
        Arguments.of(SqlDatabase.Product.POSTGRES, (Supplier<SqlDatabase>) TestServices::postgres),
        Arguments.of(SqlDatabase.Product.MARIADB, (Supplier<SqlDatabase>) TestServices::mariadb));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("databases")
  void row_round_trips_through_the_pooled_data_source(
      SqlDatabase.Product product, Supplier<SqlDatabase> accessor) throws SQLException {
    SqlDatabase database = accessor.get();
    assertThat(database.product()).isEqualTo(product);
    assertThat(database.dataSource()).isSameAs(database.dataSource());
    String table = TestServices.uniqueName("sql_self_test");

    try (Connection connection = database.dataSource().getConnection()) {
      try (Statement statement = connection.createStatement()) {
        statement.execute(
            "CREATE TABLE " + table + " (id VARCHAR(64) PRIMARY KEY, value VARCHAR(64))");
      }
      try {
        try (PreparedStatement insert =
            connection.prepareStatement("INSERT INTO " + table + " (id, value) VALUES (?, ?)")) {
          insert.setString(1, "k1");
          insert.setString(2, "hello");
          assertThat(insert.executeUpdate()).isEqualTo(1);
        }
        try (PreparedStatement select =
            connection.prepareStatement("SELECT value FROM " + table + " WHERE id = ?")) {
          select.setString(1, "k1");
          try (ResultSet rows = select.executeQuery()) {
            assertThat(rows.next()).isTrue();
            assertThat(rows.getString(1)).isEqualTo("hello");
            assertThat(rows.next()).isFalse();
          }
        }
      } finally {
        try (Statement statement = connection.createStatement()) {
          statement.execute("DROP TABLE " + table);
        }
      }
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("databases")
  void jdbc_url_and_credentials_open_connections_outside_the_pool(
      SqlDatabase.Product product, Supplier<SqlDatabase> accessor) throws Exception {
    SqlDatabase database = accessor.get();
    JdbcEndpoint endpoint =
        new JdbcEndpoint(database.jdbcUrl(), database.user(), database.password());

    SqlSources.probe(product, endpoint);

    assertThat(database.jdbcUrl())
        .startsWith(
            product == SqlDatabase.Product.POSTGRES ? "jdbc:postgresql://" : "jdbc:mariadb://");
  }
}
