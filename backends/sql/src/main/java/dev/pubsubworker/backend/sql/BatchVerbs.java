package dev.pubsubworker.backend.sql;

import dev.pubsubworker.core.BatchLockBackend.BatchResult;
import dev.pubsubworker.core.BatchLockBackend.CompleteRequest;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.InvalidLockRecordException;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.core.LockRecord;
import dev.pubsubworker.core.LockState;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The batch verbs of {@link SqlLockBackend} ({@code claimAll}, {@code completeAll}) on one dialect,
 * for requests already validated, with distinct keys and sorted by key (so concurrent batches take
 * row locks in the same order). Each entry is decided exactly as its single verb decides it, on the
 * database's clock:
 *
 * <ul>
 *   <li>PostgreSQL claim: one statement per batch ({@code INSERT ... SELECT FROM unnest(...) ON
 *       CONFLICT DO UPDATE ... RETURNING} joined with the snapshot rows, each looked up by key).
 *       Entries that lost a race to a concurrent claim are asked again in a further statement, as
 *       the single claim does.
 *   <li>PostgreSQL complete: the single complete's {@code UPDATE} per entry, as one JDBC batch.
 *   <li>No PostgreSQL statement joins the table to the request arrays: the plan the server caches
 *       per connection may have been made on an empty table, and would then scan the whole table
 *       for every batch. Every lookup is by key.
 *   <li>MariaDB: one multi-row {@code INSERT ... ON DUPLICATE KEY UPDATE ... RETURNING} per claim
 *       batch.
 *   <li>MySQL: the same upsert without {@code RETURNING}, then one {@code SELECT} of the rows, in
 *       one transaction (the upsert's row locks keep them as written until the commit).
 *   <li>H2: the compare-and-set claim per entry, all in one transaction and one commit.
 *   <li>MariaDB, MySQL, H2 complete: one {@code UPDATE} over all claims; when it changed fewer rows
 *       than there are claims, one {@code SELECT} tells DONE records (true) from stale claims.
 * </ul>
 *
 * Every row a batch statement returns for an entry it did not win is read strictly ({@link
 * StoredRow}): an unreadable row fails its own entry with {@link InvalidLockRecordException},
 * having been left as it was (the statements never write over one), and the other entries are
 * decided as if it were not there.
 *
 * <p>Thread-safe and stateless apart from the table.
 */
final class BatchVerbs {

  private static final Logger log = LoggerFactory.getLogger(BatchVerbs.class);
  private static final String CLAIM_VERB = "claimAll";
  private static final String COMPLETE_VERB = "completeAll";

  /** An entry's own failure names the single verb it stands for, as that verb would. */
  private static final String SINGLE_CLAIM = "claim";

  private static final String SINGLE_COMPLETE = "complete";

  private final LockTable table;
  private final SqlStatements sql;
  private final ClaimStrategy single;

  /** PostgreSQL's claim, whose measure of fresh keys decides whether a batch inserts first. */
  private final @Nullable PostgresUpsertClaim postgres;

  BatchVerbs(LockTable table, ClaimStrategy single) {
    this.table = table;
    this.sql = table.sql();
    this.single = single;
    this.postgres = single instanceof PostgresUpsertClaim p ? p : null;
  }

  /**
   * Claims every request; one result per request, in order.
   *
   * @throws LockBackendException if the round trip failed as a whole
   */
  List<BatchResult<ClaimResult>> claimAll(List<ClaimRequest> requests) {
    return switch (table.dialect()) {
      case POSTGRESQL -> claimPostgres(requests);
      case MARIADB -> table.execute(CLAIM_VERB, c -> claimUpsert(c, requests));
      case MYSQL -> table.executeInTransaction(CLAIM_VERB, c -> claimUpsert(c, requests));
      case H2 -> table.executeInTransaction(CLAIM_VERB, c -> claimEach(c, requests));
    };
  }

  /**
   * Completes every claim; one result per request, in order.
   *
   * @throws LockBackendException if the round trip failed as a whole
   */
  List<BatchResult<Boolean>> completeAll(List<CompleteRequest> requests) {
    return table.execute(
        COMPLETE_VERB,
        c ->
            table.dialect() == SqlDialect.POSTGRESQL
                ? completePostgres(c, requests)
                : completeByUpdate(c, requests));
  }

  // ---------------------------------------------------------------------------------------------
  // PostgreSQL
  // ---------------------------------------------------------------------------------------------

  private List<BatchResult<ClaimResult>> claimPostgres(List<ClaimRequest> requests) {
    int n = requests.size();
    List<BatchResult<ClaimResult>> out = new ArrayList<>(n);
    List<Integer> pending = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      out.add(null);
      pending.add(i);
    }
    // The statement commits on its own, so a retry after a transient error goes on with the
    // entries still pending (a repeated claim with the same token would re-affirm anyway).
    table.execute(
        CLAIM_VERB,
        c -> {
          if (postgres != null && postgres.insertFirst()) {
            List<Integer> existing = insertFresh(postgres, c, requests, List.copyOf(pending), out);
            pending.clear();
            pending.addAll(existing);
          }
          for (int round = 0;
              round < ClaimStrategy.MAX_RACE_ROUNDS && !pending.isEmpty();
              round++) {
            List<Integer> again = claimPostgresRound(c, requests, List.copyOf(pending), out);
            pending.clear();
            pending.addAll(again);
            if (!pending.isEmpty()) {
              log.debug(
                  "claimAll on {}: {} entries lost a race to concurrent claims; asking again",
                  table.namespace(),
                  pending.size());
            }
          }
          return null;
        });
    for (int i : pending) {
      out.set(i, BatchResult.failed(ClaimStrategy.raceLost(table)));
    }
    return out;
  }

  /**
   * The plain insert for the entries {@code asked} ({@link SqlStatements#claimFreshAll}): those it
   * inserted have won; returns the others, whose keys exist, for the general claim.
   */
  private List<Integer> insertFresh(
      PostgresUpsertClaim measure,
      Connection c,
      List<ClaimRequest> requests,
      List<Integer> asked,
      List<BatchResult<ClaimResult>> out)
      throws SQLException {
    Map<String, Integer> byKey = new HashMap<>();
    for (int i : asked) {
      byKey.put(requests.get(i).key(), i);
    }
    try (PreparedStatement ps = table.prepare(c, sql.claimFreshAll, arrays(requests, asked));
        ResultSet rs = table.query(ps)) {
      while (rs.next()) {
        Integer i = byKey.remove(rs.getString("lock_key"));
        if (i == null) {
          throw new SQLException("the batch insert returned a key it was not asked for");
        }
        out.set(
            i,
            BatchResult.of(
                ClaimStrategy.won(
                    requests.get(i), rs.getLong("fence"), rs.getLong("lease_expiry"))));
        measure.recordInsert(true);
      }
    }
    List<Integer> existing = new ArrayList<>();
    for (int i : asked) {
      if (out.get(i) == null) {
        existing.add(i);
        measure.recordInsert(false);
      }
    }
    return existing;
  }

  /** The arrays of the entries {@code asked}, in that order, and the clock offset. */
  private SqlTemplate.Params arrays(List<ClaimRequest> requests, List<Integer> asked) {
    int m = asked.size();
    String[] keys = new String[m];
    String[] tokens = new String[m];
    String[] fingerprints = new String[m];
    Long[] leases = new Long[m];
    Long[] ttls = new Long[m];
    for (int j = 0; j < m; j++) {
      ClaimRequest r = requests.get(asked.get(j));
      keys[j] = r.key();
      tokens[j] = r.claimToken();
      fingerprints[j] = r.fingerprint();
      leases[j] = r.lease().toMillis();
      ttls[j] = r.ttl().toMillis();
    }
    return new SqlTemplate.Params()
        .set("offset", table.offset())
        .setArray("keys", "text", keys)
        .setArray("tokens", "varchar", tokens)
        .setArray("fingerprints", "varchar", fingerprints)
        .setArray("leases", "int8", leases)
        .setArray("ttls", "int8", ttls);
  }

  /** One statement for the entries {@code asked}; returns those to ask again. */
  private List<Integer> claimPostgresRound(
      Connection c,
      List<ClaimRequest> requests,
      List<Integer> asked,
      List<BatchResult<ClaimResult>> out)
      throws SQLException {
    int m = asked.size();
    SqlTemplate.Params p = arrays(requests, asked);
    List<Integer> again = new ArrayList<>();
    int rows = 0;
    try (PreparedStatement ps = table.prepare(c, sql.claimAll, p);
        ResultSet rs = table.query(ps)) {
      while (rs.next()) {
        rows++;
        int i = asked.get((int) rs.getLong("ord") - 1);
        ClaimRequest r = requests.get(i);
        if (rs.getBoolean("won")) {
          out.set(
              i,
              BatchResult.of(
                  ClaimStrategy.won(r, rs.getLong("fence"), rs.getLong("lease_expiry"))));
          continue;
        }
        ClaimResult answer = null; // no snapshot row: inserted concurrently after the snapshot
        if (rs.getBoolean("found")) {
          LockRecord row;
          try {
            row = StoredRow.read(rs, r.key(), Instant.EPOCH, table, SINGLE_CLAIM);
          } catch (InvalidLockRecordException unreadable) {
            // The upsert left it alone; the batch-mates are decided as if it were not there.
            out.set(i, BatchResult.failed(unreadable));
            continue;
          }
          answer = ClaimStrategy.contended(row, rs.getLong("now_ms"));
        }
        if (answer == null) {
          again.add(i);
        } else {
          out.set(i, BatchResult.of(answer));
        }
      }
    }
    if (rows != m) {
      throw new SQLException("the batch claim returned " + rows + " rows for " + m + " keys");
    }
    return again;
  }

  /**
   * PostgreSQL: the single verb's {@code UPDATE} once per claim, sent as one JDBC batch (one round
   * trip, one implicit transaction). Each lookup is by primary key, whatever plan the server has
   * cached for the statement; a join over arrays would be planned once per connection, possibly
   * while the table was still empty, and keep a sequential scan as the table grows. A claim the
   * update did not match is read back, as the single complete does: true if its record is DONE.
   */
  private List<BatchResult<Boolean>> completePostgres(Connection c, List<CompleteRequest> requests)
      throws SQLException {
    int n = requests.size();
    List<SqlTemplate.Params> each = new ArrayList<>(n);
    for (CompleteRequest r : requests) {
      each.add(
          table
              .params(r.claim().key())
              .set("fence", r.claim().fence())
              .set("ttl", r.ttl().toMillis()));
    }
    int[] counts = table.updateEach(c, sql.markDone, each);
    List<BatchResult<Boolean>> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      if (counts[i] > 0) {
        out.add(BatchResult.of(true));
        continue;
      }
      try {
        LockRecord now = table.readRecord(c, requests.get(i).claim().key(), SINGLE_COMPLETE);
        out.add(BatchResult.of(now != null && now.state() == LockState.DONE));
      } catch (InvalidLockRecordException unreadable) {
        out.add(BatchResult.failed(unreadable));
      }
    }
    return out;
  }

  // ---------------------------------------------------------------------------------------------
  // MariaDB, MySQL
  // ---------------------------------------------------------------------------------------------

  private List<BatchResult<ClaimResult>> claimUpsert(Connection c, List<ClaimRequest> requests)
      throws SQLException {
    int n = requests.size();
    SqlTemplate.Params p = new SqlTemplate.Params().set("offset", table.offset());
    for (int i = 0; i < n; i++) {
      ClaimRequest r = requests.get(i);
      table.setKey(p, "key" + i, r.key());
      p.set("lease" + i, r.lease().toMillis())
          .set("ttl" + i, r.ttl().toMillis())
          .set("token" + i, r.claimToken())
          .set("fingerprint" + i, r.fingerprint());
    }
    Map<String, Map<String, String>> rows;
    if (table.dialect() == SqlDialect.MARIADB) {
      try (PreparedStatement ps = table.prepare(c, sql.upsertAll(n), p);
          ResultSet rs = table.query(ps)) {
        rows = rows(rs);
      }
    } else {
      try (PreparedStatement ps = table.prepare(c, sql.upsertAll(n), p)) {
        table.executeUpdate(ps);
      }
      rows = selectRows(c, requests.stream().map(ClaimRequest::key).toList());
    }
    List<BatchResult<ClaimResult>> out = new ArrayList<>(n);
    for (ClaimRequest r : requests) {
      Map<String, String> fields = rows.get(r.key());
      if (fields == null) {
        throw new SQLException("the batch claim returned no row for one of its keys");
      }
      LockRecord row;
      try {
        row = StoredRow.parse(fields, r.key(), Instant.EPOCH, table, SINGLE_CLAIM);
      } catch (InvalidLockRecordException unreadable) {
        // Never won, so left as it was; the batch-mates are decided as if it were not there.
        out.add(BatchResult.failed(unreadable));
        continue;
      }
      if (row.state() == LockState.CLAIMED && r.claimToken().equals(row.claimToken())) {
        out.add(
            BatchResult.of(ClaimStrategy.won(r, row.fence(), row.leaseExpiry().toEpochMilli())));
      } else {
        out.add(BatchResult.of(ClaimStrategy.refused(row)));
      }
    }
    return out;
  }

  private Map<String, Map<String, String>> selectRows(Connection c, List<String> keys)
      throws SQLException {
    SqlTemplate.Params p = new SqlTemplate.Params().set("offset", table.offset());
    for (int i = 0; i < keys.size(); i++) {
      table.setKey(p, "key" + i, keys.get(i));
    }
    try (PreparedStatement ps = table.prepare(c, sql.selectRows(keys.size()), p);
        ResultSet rs = table.query(ps)) {
      return rows(rs);
    }
  }

  /** Each returned row's fields ({@link StoredRow#fields}), by key. */
  private Map<String, Map<String, String>> rows(ResultSet rs) throws SQLException {
    Map<String, Map<String, String>> rows = new HashMap<>();
    while (rs.next()) {
      String key =
          table.dialect().storesKeysAsBytes()
              ? new String(rs.getBytes("lock_key"), StandardCharsets.UTF_8)
              : rs.getString("lock_key");
      rows.put(key, StoredRow.fields(rs));
    }
    return rows;
  }

  // ---------------------------------------------------------------------------------------------
  // H2
  // ---------------------------------------------------------------------------------------------

  private List<BatchResult<ClaimResult>> claimEach(Connection c, List<ClaimRequest> requests)
      throws SQLException {
    List<BatchResult<ClaimResult>> out = new ArrayList<>(requests.size());
    for (ClaimRequest r : requests) {
      try {
        out.add(BatchResult.of(single.claim(c, r)));
      } catch (LockBackendException raceLost) {
        out.add(BatchResult.failed(raceLost));
      }
    }
    return out;
  }

  // ---------------------------------------------------------------------------------------------
  // Complete on MariaDB, MySQL, H2
  // ---------------------------------------------------------------------------------------------

  private List<BatchResult<Boolean>> completeByUpdate(Connection c, List<CompleteRequest> requests)
      throws SQLException {
    int n = requests.size();
    SqlTemplate.Params p = new SqlTemplate.Params().set("offset", table.offset());
    for (int i = 0; i < n; i++) {
      CompleteRequest r = requests.get(i);
      table.setKey(p, "key" + i, r.claim().key());
      p.set("fence" + i, r.claim().fence()).set("ttl" + i, r.ttl().toMillis());
    }
    int changed = table.update(c, sql.markDoneAll(n), p);
    List<BatchResult<Boolean>> out = new ArrayList<>(n);
    if (changed == n) {
      for (int i = 0; i < n; i++) {
        out.add(BatchResult.of(true));
      }
      return out;
    }
    // Some claim was not CLAIMED under its fence (or its row is unreadable): true where the record
    // is DONE (under any fence), as the single complete answers.
    Map<String, Map<String, String>> rows =
        selectRows(c, requests.stream().map(r -> r.claim().key()).toList());
    for (CompleteRequest r : requests) {
      Map<String, String> fields = rows.get(r.claim().key());
      if (fields == null) {
        out.add(BatchResult.of(false));
        continue;
      }
      try {
        LockRecord row =
            StoredRow.parse(fields, r.claim().key(), Instant.EPOCH, table, SINGLE_COMPLETE);
        out.add(BatchResult.of(row.state() == LockState.DONE));
      } catch (InvalidLockRecordException unreadable) {
        out.add(BatchResult.failed(unreadable));
      }
    }
    return out;
  }
}
