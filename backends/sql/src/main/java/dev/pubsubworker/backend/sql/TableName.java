package dev.pubsubworker.backend.sql;

import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The rule for the lock table's name: a plain SQL identifier that is used verbatim in statements,
 * so everything else is refused before it gets near one. Checked by {@link SqlLockSettings} and
 * again, as defence in depth, by {@link SqlStatements} and {@link Schema}.
 */
final class TableName {

  private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

  /** Common reserved words of SQL and the supported products; unquoted, they would not parse. */
  private static final Set<String> RESERVED =
      Set.of(
          "ALL",
          "ALTER",
          "AND",
          "ANY",
          "AS",
          "ASC",
          "BETWEEN",
          "BY",
          "CASE",
          "CAST",
          "CHECK",
          "COLUMN",
          "CONSTRAINT",
          "CREATE",
          "CROSS",
          "CURRENT_DATE",
          "CURRENT_TIME",
          "CURRENT_TIMESTAMP",
          "CURRENT_USER",
          "DEFAULT",
          "DELETE",
          "DESC",
          "DISTINCT",
          "DROP",
          "ELSE",
          "END",
          "EXCEPT",
          "EXISTS",
          "FALSE",
          "FETCH",
          "FOR",
          "FOREIGN",
          "FROM",
          "FULL",
          "GRANT",
          "GROUP",
          "HAVING",
          "IF",
          "IN",
          "INDEX",
          "INNER",
          "INSERT",
          "INTERSECT",
          "INTO",
          "IS",
          "JOIN",
          "KEY",
          "LEFT",
          "LIKE",
          "LIMIT",
          "NATURAL",
          "NOT",
          "NULL",
          "OFFSET",
          "ON",
          "OR",
          "ORDER",
          "OUTER",
          "PRIMARY",
          "REFERENCES",
          "RETURNING",
          "RIGHT",
          "ROW",
          "ROWS",
          "SELECT",
          "SET",
          "SOME",
          "TABLE",
          "THEN",
          "TO",
          "TRUE",
          "UNION",
          "UNIQUE",
          "UPDATE",
          "USER",
          "USING",
          "VALUES",
          "WHEN",
          "WHERE",
          "WINDOW",
          "WITH");

  /**
   * Checks a table name: a plain SQL identifier ({@code [A-Za-z_][A-Za-z0-9_]*}), at most {@value
   * SqlLockSettings#MAX_TABLE_LENGTH} characters, and not a common reserved word. No quoting, no
   * schema qualifier: the name is used verbatim in statements, so anything else is refused here.
   *
   * @throws NullPointerException if name is null
   * @throws IllegalArgumentException naming the problem and the value
   */
  static String requireValid(String name) {
    Objects.requireNonNull(name, "table");
    if (!IDENTIFIER.matcher(name).matches()) {
      throw new IllegalArgumentException(
          "table must be a plain SQL identifier ([A-Za-z_][A-Za-z0-9_]*: letters, digits and"
              + " underscores, not starting with a digit; no quotes, spaces, dots or other"
              + " characters), but was "
              + printable(name));
    }
    if (name.length() > SqlLockSettings.MAX_TABLE_LENGTH) {
      throw new IllegalArgumentException(
          "table must be at most "
              + SqlLockSettings.MAX_TABLE_LENGTH
              + " characters, but was "
              + name.length()
              + " ("
              + name
              + ")");
    }
    if (RESERVED.contains(name.toUpperCase(Locale.ROOT))) {
      throw new IllegalArgumentException(
          "table must not be an SQL reserved word, but was " + printable(name));
    }
    return name;
  }

  /** The value in quotes with control characters escaped, so the message stays on one line. */
  private static String printable(String s) {
    StringBuilder b = new StringBuilder("'");
    int limit = Math.min(s.length(), 80);
    for (int i = 0; i < limit; i++) {
      char c = s.charAt(i);
      if (c < 0x20 || c == 0x7f) {
        b.append(String.format("\\u%04X", (int) c));
      } else {
        b.append(c);
      }
    }
    if (s.length() > limit) {
      b.append("...");
    }
    return b.append('\'').toString();
  }

  private TableName() {}
}
