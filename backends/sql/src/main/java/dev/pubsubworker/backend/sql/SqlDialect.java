package dev.pubsubworker.backend.sql;

import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The SQL dialects {@link SqlLockBackend} speaks. The backend detects the dialect from the
 * connection's {@link DatabaseMetaData} unless {@link SqlLockSettings.Builder#dialect} names one.
 * Each dialect has its DDL file in this package's resources ({@link #schemaResource()}).
 *
 * <p>Round trips per verb differ by dialect; see {@link SqlLockBackend} and the module README.
 */
public enum SqlDialect {

  /**
   * PostgreSQL 9.5 or later: every verb is one statement ({@code INSERT … ON CONFLICT … DO UPDATE …
   * WHERE … RETURNING} for claim). Keys are {@code text COLLATE "C"}; a key containing U+0000 is
   * rejected because PostgreSQL text cannot hold it.
   */
  POSTGRESQL("schema-postgresql.sql"),

  /**
   * MariaDB 10.5 or later: claim is one {@code INSERT … ON DUPLICATE KEY UPDATE … RETURNING}
   * statement. Keys are stored as their UTF-8 bytes in a {@code VARBINARY(1024)} column.
   */
  MARIADB("schema-mysql.sql"),

  /**
   * MySQL 8.0 or later (and MariaDB before 10.5), which have no {@code RETURNING}: claim reads the
   * row and writes it with a compare-and-set on what it read (two statements, no transaction). Same
   * table layout as {@link #MARIADB}.
   */
  MYSQL("schema-mysql.sql"),

  /**
   * H2 2.x, the embedded default for local runs: the same compare-and-set claim as {@link #MYSQL}.
   */
  H2("schema-h2.sql");

  private static final Pattern MARIADB_VERSION =
      Pattern.compile("(?:^|-)(\\d+)\\.(\\d+)[.\\d]*-MariaDB", Pattern.CASE_INSENSITIVE);

  private final String schemaResource;

  SqlDialect(String schemaResource) {
    this.schemaResource = schemaResource;
  }

  /**
   * The class-path resource (relative to this class) holding this dialect's DDL, for the default
   * table name {@value SqlLockSettings#DEFAULT_TABLE}; e.g. {@code
   * dev/pubsubworker/backend/sql/schema-postgresql.sql}.
   */
  public String schemaResource() {
    return "dev/pubsubworker/backend/sql/" + schemaResource;
  }

  /** Whether keys are bound and stored as their UTF-8 bytes rather than as text. */
  boolean storesKeysAsBytes() {
    return this == MARIADB || this == MYSQL;
  }

  /**
   * The dialect for a connection's metadata, or empty for a product this backend does not know.
   *
   * @throws SQLException if the metadata cannot be read
   */
  static Optional<SqlDialect> detect(DatabaseMetaData metaData) throws SQLException {
    String product = metaData.getDatabaseProductName();
    String version = metaData.getDatabaseProductVersion();
    String name = product == null ? "" : product.toLowerCase(Locale.ROOT);
    if (name.contains("postgresql")) {
      return Optional.of(POSTGRESQL);
    }
    if (name.equals("h2")) {
      return Optional.of(H2);
    }
    if (name.contains("mariadb")) {
      return Optional.of(
          mariaDbWithReturning(
                  metaData.getDatabaseMajorVersion(), metaData.getDatabaseMinorVersion())
              ? MARIADB
              : MYSQL);
    }
    if (name.contains("mysql")) {
      // MySQL's own driver reports a MariaDB server as "MySQL" with a version like
      // "5.5.5-10.11.6-MariaDB"; the real version follows the compatibility prefix.
      Matcher m = MARIADB_VERSION.matcher(version == null ? "" : version);
      if (m.find()) {
        int major = Integer.parseInt(m.group(1));
        int minor = Integer.parseInt(m.group(2));
        return Optional.of(mariaDbWithReturning(major, minor) ? MARIADB : MYSQL);
      }
      return Optional.of(MYSQL);
    }
    return Optional.empty();
  }

  /** INSERT … RETURNING arrived in MariaDB 10.5. */
  private static boolean mariaDbWithReturning(int major, int minor) {
    return major > 10 || (major == 10 && minor >= 5);
  }
}
