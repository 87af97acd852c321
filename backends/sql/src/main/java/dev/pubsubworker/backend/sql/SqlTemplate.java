package dev.pubsubworker.backend.sql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One statement with named parameters ({@code :name}), turned into JDBC's positional {@code ?}
 * once, at construction. Every value reaches the database as a bound parameter; nothing is
 * concatenated into the text except the validated table name and the dialect's fixed clock
 * expression.
 *
 * <p>A name may occur several times (the clock offset, for instance): each occurrence binds the
 * same value. {@code ::} (a PostgreSQL cast) and anything inside single quotes are left alone.
 * Immutable and thread-safe.
 */
final class SqlTemplate {

  private final String sql;
  private final List<String> names;

  /** The statement {@link #after} put before this one, or null. */
  private final String prefix;

  /** The last {@link #after} result, kept: a table asks for one prefix only. */
  private volatile SqlTemplate prefixed;

  private SqlTemplate(String sql, List<String> names, String prefix) {
    this.sql = sql;
    this.names = List.copyOf(names);
    this.prefix = prefix;
  }

  /** Parses {@code text}, in which {@code :name} marks a parameter. */
  static SqlTemplate parse(String text) {
    StringBuilder out = new StringBuilder(text.length());
    List<String> names = new ArrayList<>();
    boolean quoted = false;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '\'') {
        quoted = !quoted;
        out.append(c);
      } else if (!quoted
          && c == ':'
          && i + 1 < text.length()
          && Character.isLetter(text.charAt(i + 1))
          && (i == 0 || text.charAt(i - 1) != ':')) {
        int end = i + 1;
        while (end < text.length()
            && (Character.isLetterOrDigit(text.charAt(end)) || text.charAt(end) == '_')) {
          end++;
        }
        names.add(text.substring(i + 1, end));
        out.append('?');
        i = end - 1;
      } else {
        out.append(c);
      }
    }
    return new SqlTemplate(out.toString(), names, null);
  }

  /** The statement with positional parameters. */
  String sql() {
    return sql;
  }

  /**
   * This statement preceded by {@code statement}, a statement without parameters that ends with
   * {@code ;}, sent with it in one round trip (PostgreSQL's driver splits the text and pipelines
   * both). Built once and kept for the last prefix asked for.
   */
  SqlTemplate after(String statement) {
    SqlTemplate p = prefixed;
    if (p != null && p.prefix.equals(statement)) {
      return p;
    }
    p = new SqlTemplate(statement + sql, names, statement);
    prefixed = p;
    return p;
  }

  /** The parameter names in order of occurrence. */
  List<String> names() {
    return names;
  }

  /**
   * Prepares the statement on {@code connection} and binds {@code params}.
   *
   * @throws IllegalStateException if a parameter has no value (a bug in this package)
   */
  PreparedStatement prepare(Connection connection, Params params) throws SQLException {
    PreparedStatement ps = connection.prepareStatement(sql);
    try {
      bind(ps, params);
      return ps;
    } catch (SQLException | RuntimeException e) {
      ps.close();
      throw e;
    }
  }

  /** Binds {@code params} to a statement this template prepared (for one entry of a batch). */
  void bind(PreparedStatement ps, Params params) throws SQLException {
    for (int i = 0; i < names.size(); i++) {
      params.bind(ps, i + 1, names.get(i));
    }
  }

  @Override
  public String toString() {
    return sql;
  }

  /** Named values for one execution. Not thread-safe; one per call. */
  static final class Params {
    private static final Object NULL_TEXT = new Object();

    private record ArrayValue(String elementType, Object[] elements) {}

    private final Map<String, Object> values = new HashMap<>();

    /** A long parameter. */
    Params set(String name, long value) {
      values.put(name, value);
      return this;
    }

    /** A text parameter; {@code null} binds SQL NULL. */
    Params set(String name, String value) {
      values.put(name, value == null ? NULL_TEXT : value);
      return this;
    }

    /** A binary parameter. */
    Params set(String name, byte[] value) {
      values.put(name, value);
      return this;
    }

    /**
     * An SQL array parameter (PostgreSQL), made with {@link Connection#createArrayOf} on the
     * statement's connection when bound; {@code elementType} is the element's type name ({@code
     * text}, {@code int8}).
     */
    Params setArray(String name, String elementType, Object[] elements) {
      values.put(name, new ArrayValue(elementType, elements));
      return this;
    }

    void bind(PreparedStatement ps, int index, String name) throws SQLException {
      if (!values.containsKey(name)) {
        throw new IllegalStateException("no value for SQL parameter :" + name);
      }
      Object v = values.get(name);
      if (v == NULL_TEXT) {
        ps.setNull(index, Types.VARCHAR);
      } else if (v instanceof Long l) {
        ps.setLong(index, l);
      } else if (v instanceof String s) {
        ps.setString(index, s);
      } else if (v instanceof ArrayValue a) {
        ps.setArray(index, ps.getConnection().createArrayOf(a.elementType(), a.elements()));
      } else {
        ps.setBytes(index, (byte[]) v);
      }
    }
  }
}
