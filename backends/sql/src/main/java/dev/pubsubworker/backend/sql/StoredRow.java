package dev.pubsubworker.backend.sql;

import dev.pubsubworker.core.InvalidLockRecordException;
import dev.pubsubworker.core.LockRecord;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A lock row on the current row of a result set, read strictly: every column as text, by the
 * record's field names, through {@link LockRecord#parse}. Whatever a statement returns for a
 * decision (the row a claim found live, the row a write did not match) goes through here, so an
 * unreadable row is reported ({@link InvalidLockRecordException}) and never taken for a live or a
 * DONE one. The result set must have the columns {@code state}, {@code fence}, {@code
 * lease_expiry}, {@code expires_at}, {@code claim_token} and {@code fingerprint}; a NULL column is
 * a field the row lacks.
 */
final class StoredRow {

  private StoredRow() {}

  /** The row's fields as text, by the names {@link LockRecord#parse} reads; NULLs left out. */
  static Map<String, String> fields(ResultSet rs) throws SQLException {
    Map<String, String> fields = new LinkedHashMap<>();
    put(fields, "state", rs.getString("state"));
    put(fields, "fence", rs.getString("fence"));
    put(fields, "leaseExpiry", rs.getString("lease_expiry"));
    put(fields, "expiresAt", rs.getString("expires_at"));
    put(fields, "claimToken", rs.getString("claim_token"));
    put(fields, "fingerprint", rs.getString("fingerprint"));
    return fields;
  }

  /**
   * The row as a record.
   *
   * @param observedAt the database clock at the read, or the epoch where the caller has none and
   *     needs none
   * @throws InvalidLockRecordException if the row is unreadable
   */
  static LockRecord read(ResultSet rs, String key, Instant observedAt, LockTable table, String verb)
      throws SQLException {
    return parse(fields(rs), key, observedAt, table, verb);
  }

  /**
   * A row read earlier with {@link #fields}, as a record.
   *
   * @throws InvalidLockRecordException if the row is unreadable
   */
  static LockRecord parse(
      Map<String, String> fields, String key, Instant observedAt, LockTable table, String verb) {
    return LockRecord.parse(key, fields, observedAt, verb + " failed on " + table.namespace());
  }

  private static void put(Map<String, String> fields, String name, String value) {
    if (value != null) {
      fields.put(name, value);
    }
  }
}
