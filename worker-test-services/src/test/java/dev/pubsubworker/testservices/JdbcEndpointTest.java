package dev.pubsubworker.testservices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pubsubworker.testservices.SqlDatabase.Product;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JdbcEndpointTest {

  @TempDir Path workDir;

  private ServiceEnvironment environment(String... variables) {
    TestEnvironments environment = new TestEnvironments(workDir);
    for (int i = 0; i < variables.length; i += 2) {
      environment.set(variables[i], variables[i + 1]);
    }
    return environment.build();
  }

  @Test
  void postgres_uri_becomes_a_jdbc_url_with_its_credentials() {
    JdbcEndpoint endpoint =
        JdbcEndpoint.parse(
            Product.POSTGRES,
            "postgresql://app:p%40ss@db.example:6543/orders?ssl=true",
            environment());

    assertThat(endpoint.jdbcUrl()).isEqualTo("jdbc:postgresql://db.example:6543/orders?ssl=true");
    assertThat(endpoint.user()).isEqualTo("app");
    assertThat(endpoint.password()).isEqualTo("p@ss");
    assertThat(endpoint.redactedUrl())
        .isEqualTo("jdbc:postgresql://db.example:6543/orders?ssl=true as app");
  }

  @Test
  void postgres_scheme_and_default_port() {
    JdbcEndpoint endpoint =
        JdbcEndpoint.parse(Product.POSTGRES, "postgres://localhost/test", environment());

    assertThat(endpoint.jdbcUrl()).isEqualTo("jdbc:postgresql://localhost:5432/test");
    assertThat(endpoint.user()).isEmpty();
  }

  @Test
  void jdbc_url_takes_credentials_from_its_parameters_or_the_environment() {
    JdbcEndpoint fromParameters =
        JdbcEndpoint.parse(
            Product.POSTGRES,
            "jdbc:postgresql://h:5432/db?user=u&password=secret",
            environment("POSTGRES_USER", "ignored"));
    JdbcEndpoint fromEnvironment =
        JdbcEndpoint.parse(
            Product.POSTGRES,
            "jdbc:postgresql://h:5432/db",
            environment("POSTGRES_USER", "u2", "POSTGRES_PASSWORD", "pw2"));

    assertThat(fromParameters.user()).isEqualTo("u");
    assertThat(fromParameters.password()).isEqualTo("secret");
    assertThat(fromParameters.redactedUrl())
        .isEqualTo("jdbc:postgresql://h:5432/db?user=u&password=*** as u");
    assertThat(fromEnvironment.user()).isEqualTo("u2");
    assertThat(fromEnvironment.password()).isEqualTo("pw2");
  }

  @Test
  void mariadb_accepts_mysql_schemes() {
    assertThat(
            JdbcEndpoint.parse(Product.MARIADB, "mysql://root@127.0.0.1/test", environment())
                .jdbcUrl())
        .isEqualTo("jdbc:mariadb://127.0.0.1:3306/test");
    assertThat(
            JdbcEndpoint.parse(Product.MARIADB, "jdbc:mysql://127.0.0.1:3307/x", environment())
                .jdbcUrl())
        .isEqualTo("jdbc:mariadb://127.0.0.1:3307/x");
  }

  @Test
  void wrong_forms_are_named_without_their_password() {
    assertThatThrownBy(
            () -> JdbcEndpoint.parse(Product.POSTGRES, "mysql://u:secret@h:3306/db", environment()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "'mysql://u:***@h:3306/db' is not a postgresql://user:password@host:port/db URL");
    assertThatThrownBy(
            () -> JdbcEndpoint.parse(Product.MARIADB, "jdbc:postgresql://h/db", environment()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("'jdbc:postgresql://h/db' is not a jdbc:mariadb: URL");
    assertThatThrownBy(
            () -> JdbcEndpoint.parse(Product.POSTGRES, "postgresql://h:5432", environment()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("is not a postgresql://");
  }
}
