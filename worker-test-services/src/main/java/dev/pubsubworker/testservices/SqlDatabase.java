package dev.pubsubworker.testservices;

import java.util.Locale;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * A SQL database that accepted a connection when it was resolved, with a pooled {@link DataSource}
 * shared by every test in the JVM. Keep tests apart with table names from {@link
 * TestServices#uniqueName(String)}; they match {@code [a-z0-9_]} and fit both products' identifier
 * limits, so they need no quoting.
 *
 * <p>Thread-safe.
 */
public final class SqlDatabase {

  /** The database product behind the connection. */
  public enum Product {
    /** PostgreSQL; the {@code org.postgresql:postgresql} driver. */
    POSTGRES,
    /** MariaDB (or MySQL); the {@code org.mariadb.jdbc:mariadb-java-client} driver. */
    MARIADB
  }

  /** Largest pool; the contract suite's concurrency tests use a handful of threads. */
  static final int MAX_POOL_SIZE = 16;

  private final Product product;
  private final JdbcEndpoint endpoint;
  private final ServiceSource source;
  private DataSource dataSource;

  SqlDatabase(Product product, JdbcEndpoint endpoint, ServiceSource source) {
    this.product = Objects.requireNonNull(product);
    this.endpoint = Objects.requireNonNull(endpoint);
    this.source = Objects.requireNonNull(source);
  }

  /** Which database this is. */
  public Product product() {
    return product;
  }

  /**
   * The JDBC URL, e.g. {@code "jdbc:postgresql://127.0.0.1:5432/test"}; use it with {@link #user()}
   * and {@link #password()} to open connections outside the shared pool.
   */
  public String jdbcUrl() {
    return endpoint.jdbcUrl();
  }

  /** The user name; empty when the URL carries it or the driver's default applies. */
  public String user() {
    return endpoint.user();
  }

  /** The password; empty for none. */
  public String password() {
    return endpoint.password();
  }

  /** Where this database came from. */
  public ServiceSource source() {
    return source;
  }

  /**
   * The shared HikariCP pool for this database (at most {@value #MAX_POOL_SIZE} connections,
   * auto-commit on), created on first call and closed at JVM exit. Do not close it.
   */
  public synchronized DataSource dataSource() {
    if (dataSource == null) {
      dataSource =
          HikariPools.open(
              "test-services-" + product.name().toLowerCase(Locale.ROOT),
              SqlSources.driverClass(product),
              endpoint);
    }
    return dataSource;
  }

  /** The URL with any password masked, and the source. */
  @Override
  public String toString() {
    return product + " " + endpoint.redactedUrl() + " (" + source.label() + ")";
  }
}
