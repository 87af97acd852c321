package dev.pubsubworker.backend.sql;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Proxy;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.Optional;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class SqlDialectTest {

  /** Metadata answering only what detection asks. */
  private static DatabaseMetaData metaData(String product, String version, int major, int minor) {
    return (DatabaseMetaData)
        Proxy.newProxyInstance(
            SqlDialectTest.class.getClassLoader(),
            new Class<?>[] {DatabaseMetaData.class},
            (p, m, a) ->
                switch (m.getName()) {
                  case "getDatabaseProductName" -> product;
                  case "getDatabaseProductVersion" -> version;
                  case "getDatabaseMajorVersion" -> major;
                  case "getDatabaseMinorVersion" -> minor;
                  default -> throw new UnsupportedOperationException(m.getName());
                });
  }

  private static Optional<SqlDialect> detect(String product, String version, int major, int minor)
      throws SQLException {
    return SqlDialect.detect(metaData(product, version, major, minor));
  }

  @Test
  @DisplayName("products and versions map to dialects")
  void detection() throws SQLException {
    assertThat(detect("PostgreSQL", "15.4", 15, 4)).contains(SqlDialect.POSTGRESQL);
    assertThat(detect("H2", "2.3.232 (2024-08-11)", 2, 3)).contains(SqlDialect.H2);
    assertThat(detect("MariaDB", "10.11.6-MariaDB-0+deb12u1", 10, 11)).contains(SqlDialect.MARIADB);
    assertThat(detect("MariaDB", "11.4.2-MariaDB", 11, 4)).contains(SqlDialect.MARIADB);
    assertThat(detect("MariaDB", "10.4.32-MariaDB", 10, 4)).contains(SqlDialect.MYSQL);
    assertThat(detect("MySQL", "8.0.36", 8, 0)).contains(SqlDialect.MYSQL);
    // MySQL's driver on a MariaDB server reports a compatibility version first.
    assertThat(detect("MySQL", "5.5.5-10.11.6-MariaDB", 5, 5)).contains(SqlDialect.MARIADB);
    assertThat(detect("MySQL", "5.5.5-10.3.39-MariaDB", 5, 5)).contains(SqlDialect.MYSQL);
    assertThat(detect("Oracle", "19c", 19, 0)).isEmpty();
  }

  @Test
  @DisplayName("each dialect names its DDL resource, and it is on the class path")
  void schema_resources_exist() {
    for (SqlDialect d : SqlDialect.values()) {
      assertThat(SqlDialect.class.getClassLoader().getResource(d.schemaResource()))
          .as(d.schemaResource())
          .isNotNull();
      assertThat(Schema.statements(d, "my_locks"))
          .isNotEmpty()
          .allSatisfy(
              s -> assertThat(s).doesNotContain("pubsub_worker_locks").contains("my_locks"));
    }
  }
}
