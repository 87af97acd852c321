package dev.pubsubworker.backend.sql;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/**
 * The DDL files in this package's resources, one per dialect, written for the default table name;
 * every other identifier in them starts with it, so substituting the (validated) table name renames
 * the constraints and the index too.
 */
final class Schema {

  private Schema() {}

  /** The dialect's DDL statements for {@code table}, comments removed. */
  static List<String> statements(SqlDialect dialect, String table) {
    String text = read(dialect.schemaResource());
    StringBuilder withoutComments = new StringBuilder();
    for (String line : text.split("\n", -1)) {
      String code = line;
      int comment = code.indexOf("--");
      if (comment >= 0) {
        code = code.substring(0, comment);
      }
      if (!code.isBlank()) {
        withoutComments.append(code).append('\n');
      }
    }
    List<String> statements = new ArrayList<>();
    for (String s : withoutComments.toString().split(";")) {
      if (!s.isBlank()) {
        statements.add(
            s.strip().replace(SqlLockSettings.DEFAULT_TABLE, TableName.requireValid(table)));
      }
    }
    return statements;
  }

  /** Runs the dialect's DDL for {@code table} on {@code connection} (in auto-commit mode). */
  static void create(Connection connection, SqlDialect dialect, String table) throws SQLException {
    try (Statement st = connection.createStatement()) {
      for (String ddl : statements(dialect, table)) {
        st.execute(ddl);
      }
    }
  }

  private static String read(String resource) {
    try (InputStream in = Schema.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("missing resource " + resource);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("could not read " + resource, e);
    }
  }
}
