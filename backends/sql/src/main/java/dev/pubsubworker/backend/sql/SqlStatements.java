package dev.pubsubworker.backend.sql;

import dev.pubsubworker.core.LockBackend;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.IntFunction;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The statements of one dialect on one table. Every time is epoch milliseconds; {@code {now}} is
 * the database's clock in milliseconds plus the bound {@code :offset} (zero outside tests), read
 * once per statement where the dialect allows:
 *
 * <ul>
 *   <li>PostgreSQL: {@code statement_timestamp()}, the start of the current statement (not of the
 *       transaction, which matters for the DONE write at the end of a transactional-mode work).
 *   <li>MySQL/MariaDB: {@code UTC_TIMESTAMP(3)}, the statement's start in UTC (so the session time
 *       zone and its daylight-saving jumps play no part).
 *   <li>H2: {@code CURRENT_TIMESTAMP(3)}, fixed for the whole transaction.
 * </ul>
 *
 * Immutable and thread-safe.
 */
final class SqlStatements {

  private static final String COLUMNS =
      "state, fence, lease_expiry, expires_at, claim_token, fingerprint";

  /**
   * PostgreSQL: the upsert's conflict clause shared by the single and the batch claim. On the
   * latest committed row {@code r}: the caller's own live claim is re-affirmed (same fence), a
   * lapsed lease or suppression window is taken over (fence + 1, or 1 after the maximum), anything
   * else, an unreadable row included, is left alone (and not returned). Expects a {@code clock} CTE
   * and the alias {@code r} for the table.
   */
  private static final String POSTGRES_TAKE =
      """
      ON CONFLICT (lock_key) DO UPDATE SET
        fence = CASE WHEN r.state = 'CLAIMED' AND r.claim_token = excluded.claim_token
                           AND (SELECT now_ms FROM clock) < r.expires_at
                      THEN r.fence WHEN r.fence >= {max} THEN 1 ELSE r.fence + 1 END,
        state = 'CLAIMED',
        lease_expiry = excluded.lease_expiry,
        expires_at = excluded.expires_at,
        claim_token = excluded.claim_token,
        fingerprint = excluded.fingerprint
      WHERE {valid:r}
        AND ((r.state = 'CLAIMED' AND r.claim_token = excluded.claim_token
              AND (SELECT now_ms FROM clock) < r.expires_at)
          OR (r.state = 'CLAIMED' AND (SELECT now_ms FROM clock) >= r.lease_expiry)
          OR (r.state = 'DONE' AND (SELECT now_ms FROM clock) >= r.expires_at))""";

  /**
   * PostgreSQL claim: one statement. {@code cur} is the row as the statement's snapshot sees it. If
   * it is live and not the caller's (held by another claim, or DONE within its window), nothing is
   * inserted and no row is locked: the snapshot row is the answer, so duplicates and contended
   * claims do not queue behind each other on a hot key. Otherwise the upsert decides on the latest
   * committed row (whatever the snapshot saw) and returns the new fence and lease if it won; if it
   * did not, the snapshot row is returned: the caller reads it strictly (an unreadable row is the
   * answer), or asks again if it was reclaimable.
   */
  private static final String POSTGRES_CLAIM =
      """
      WITH clock AS (SELECT {now} AS now_ms),
      cur AS (SELECT t.fence, t.lease_expiry, t.expires_at, t.state, t.fingerprint, t.claim_token
                FROM {table} t WHERE t.lock_key = :key),
      won AS (
        INSERT INTO {table} AS r
          (lock_key, state, fence, lease_expiry, expires_at, claim_token, fingerprint)
        SELECT :key, 'CLAIMED', 1, c.now_ms + :lease, c.now_ms + :lease + :ttl, :token, :fingerprint
          FROM clock c
         WHERE NOT EXISTS (
                 SELECT 1 FROM cur
                  WHERE (cur.state = 'CLAIMED' AND c.now_ms < cur.lease_expiry
                         AND cur.claim_token IS DISTINCT FROM :token)
                     OR (cur.state = 'DONE' AND c.now_ms < cur.expires_at))
        {take}
        RETURNING r.fence, r.lease_expiry)
      SELECT TRUE AS won, w.fence, w.lease_expiry, NULL::bigint AS expires_at,
             NULL::varchar AS state, NULL::varchar AS fingerprint, NULL::varchar AS claim_token,
             NULL::bigint AS now_ms
        FROM won w
      UNION ALL
      SELECT FALSE, cur.fence, cur.lease_expiry, cur.expires_at, cur.state, cur.fingerprint,
             cur.claim_token, c.now_ms
        FROM cur, clock c
       WHERE NOT EXISTS (SELECT 1 FROM won)
      """;

  /**
   * MariaDB claim: one statement. The condition {@code {won}} is true exactly when the claim wins,
   * whether the server evaluates the assignments left to right (MySQL's and MariaDB's default: a
   * later assignment sees the new value of an earlier one) or simultaneously (MariaDB's
   * SIMULTANEOUS_ASSIGNMENT mode). It is the transition table's condition (token re-affirm, lapsed
   * lease, lapsed window) on the old row, written so that it stays true once claim_token and state
   * have been overwritten with the winner's values: a losing row keeps every old value, and an old
   * row with this token and state CLAIMED always wins (its retention outlasts its lease), so the
   * first disjunct never misfires. fence goes first, while every column still holds its old value.
   */
  private static final String MARIADB_CLAIM =
      """
      INSERT INTO {table} (lock_key, state, fence, lease_expiry, expires_at, claim_token, fingerprint)
      VALUES (:key, 'CLAIMED', 1, {now} + :lease, {now} + :lease + :ttl, :token, :fingerprint)
      ON DUPLICATE KEY UPDATE
        fence = IF({won},
                   IF(state = 'CLAIMED' AND claim_token = :token AND {now} < expires_at,
                      fence, IF(fence >= {max}, 1, fence + 1)),
                   fence),
        fingerprint = IF({won}, :fingerprint, fingerprint),
        claim_token = IF({won}, :token, claim_token),
        state = IF({won}, 'CLAIMED', state),
        expires_at = IF({won}, {now} + :lease + :ttl, expires_at),
        lease_expiry = IF({won}, {now} + :lease, lease_expiry)
      RETURNING state, fence, lease_expiry, expires_at, claim_token, fingerprint
      """;

  /**
   * MariaDB and MySQL: the claim's condition. An unreadable row never wins (and is never written);
   * every assignment of a winning row leaves it readable, so {@code {valid}} stays true while the
   * assignments overwrite it one by one.
   */
  private static final String MARIADB_WON =
      "({valid} AND ((state = 'CLAIMED' AND claim_token = :token)"
          + " OR (state = 'CLAIMED' AND {now} >= lease_expiry)"
          + " OR (state = 'DONE' AND {now} >= expires_at)))";

  /**
   * PostgreSQL batch claim: {@link #POSTGRES_CLAIM} over arrays, one row per request (in the
   * arrays' order, {@code ord} from 1). {@code cur} is every requested row as the statement's
   * snapshot sees it; the upsert takes, in array order (the caller sorts by key, so concurrent
   * batches lock rows in the same order), every request that {@code cur} does not show live and
   * held by another claim or DONE. A request the upsert did not take comes back with its snapshot
   * row (or none, if a concurrent claim inserted the key after the snapshot), as the single claim's
   * does; the caller asks again for those whose snapshot row is reclaimable or missing.
   */
  private static final String POSTGRES_CLAIM_ALL =
      """
      WITH clock AS (SELECT {now} AS now_ms),
      req AS (SELECT * FROM unnest(:keys::text[], :tokens::varchar[], :fingerprints::varchar[],
                                   :leases::bigint[], :ttls::bigint[])
                       WITH ORDINALITY AS q(k, token, fp, lease, ttl, ord)),
      cur AS (SELECT q.k AS lock_key, t.fence, t.lease_expiry, t.expires_at, t.state,
                     t.fingerprint, t.claim_token
                FROM req q
               CROSS JOIN LATERAL (SELECT x.fence, x.lease_expiry, x.expires_at, x.state,
                                          x.fingerprint, x.claim_token
                                     FROM {table} x WHERE x.lock_key = q.k LIMIT 1) t),
      won AS (
        INSERT INTO {table} AS r
          (lock_key, state, fence, lease_expiry, expires_at, claim_token, fingerprint)
        SELECT q.k, 'CLAIMED', 1, c.now_ms + q.lease, c.now_ms + q.lease + q.ttl, q.token, q.fp
          FROM req q, clock c
         WHERE NOT EXISTS (
                 SELECT 1 FROM cur
                  WHERE cur.lock_key = q.k
                    AND ((cur.state = 'CLAIMED' AND c.now_ms < cur.lease_expiry
                          AND cur.claim_token IS DISTINCT FROM q.token)
                         OR (cur.state = 'DONE' AND c.now_ms < cur.expires_at)))
         ORDER BY q.ord
        {take}
        RETURNING r.lock_key, r.fence, r.lease_expiry)
      SELECT q.ord, w.lock_key IS NOT NULL AS won, cur.lock_key IS NOT NULL AS found,
             COALESCE(w.fence, cur.fence) AS fence,
             COALESCE(w.lease_expiry, cur.lease_expiry) AS lease_expiry,
             cur.expires_at, cur.state, cur.fingerprint, cur.claim_token, c.now_ms
        FROM req q CROSS JOIN clock c
        LEFT JOIN won w ON w.lock_key = q.k
        LEFT JOIN cur ON cur.lock_key = q.k
      """;

  /**
   * PostgreSQL batch insert of fresh keys: {@link #claimFresh} over arrays, in request order (the
   * caller sorts by key, so concurrent batches wait for each other's inserts in one order). The
   * existence test is a lateral lookup with {@code LIMIT 1} rather than {@code NOT EXISTS}, which
   * the planner may turn into an anti-join that reads the whole table under a plan cached while it
   * was small. Returns the inserted keys with their fence and lease.
   */
  private static final String POSTGRES_CLAIM_FRESH_ALL =
      """
      INSERT INTO {table}
        (lock_key, state, fence, lease_expiry, expires_at, claim_token, fingerprint)
      SELECT q.k, 'CLAIMED', 1, {now} + q.lease, {now} + q.lease + q.ttl, q.token, q.fp
        FROM unnest(:keys::text[], :tokens::varchar[], :fingerprints::varchar[],
                    :leases::bigint[], :ttls::bigint[])
                    WITH ORDINALITY AS q(k, token, fp, lease, ttl, ord)
        LEFT JOIN LATERAL (SELECT 1 AS found FROM {table} x WHERE x.lock_key = q.k LIMIT 1) e
          ON TRUE
       WHERE e.found IS NULL
       ORDER BY q.ord
      ON CONFLICT (lock_key) DO NOTHING
      RETURNING lock_key, fence, lease_expiry
      """;

  /**
   * {@code {valid}} or {@code {valid:alias}}: true for a row the backend can read (the rules of
   * {@link dev.pubsubworker.core.LockRecord#parse}), false or NULL otherwise. Every write requires
   * it, so no statement answers for, or writes over, an unreadable row; whoever reads such a row
   * reads it strictly and reports it.
   */
  private static final Pattern VALID = Pattern.compile("\\{valid(?::([a-z]+))?}");

  /**
   * A claim token's characters: printable ASCII ({@code !} to {@code ~}); its length, 1 to 128, is
   * tested apart. A bounded repetition ({@code {1,128}}) compiles to 128 copies of the class: on
   * PostgreSQL 15 that one test made a complete statement cost 72 instead of 45 µs of execution.
   */
  private static final String TOKEN_CHARS = "^[!-~]+$";

  /** The most entries a batch statement is built for; {@link SqlLockBackend#MAX_BATCH_SIZE}. */
  static final int MAX_BATCH = 64;

  private final SqlDialect dialect;
  private final String table;
  private final AtomicReferenceArray<SqlTemplate> upserts =
      new AtomicReferenceArray<>(MAX_BATCH + 1);
  private final AtomicReferenceArray<SqlTemplate> selects =
      new AtomicReferenceArray<>(MAX_BATCH + 1);
  private final AtomicReferenceArray<SqlTemplate> markDones =
      new AtomicReferenceArray<>(MAX_BATCH + 1);

  /** PostgreSQL: the batch claim over arrays. Null for the other dialects. */
  final SqlTemplate claimAll;

  /** PostgreSQL: the batch insert of fresh keys over arrays. Null for the other dialects. */
  final SqlTemplate claimFreshAll;

  /** PostgreSQL and MariaDB: the one claim statement. Null for the compare-and-set dialects. */
  final SqlTemplate claim;

  /** MySQL and H2: the clock and the row, read without locks. */
  final SqlTemplate claimRead;

  /** MySQL and H2: insert a fresh record (fails on a duplicate key if another claim was first). */
  final SqlTemplate claimInsert;

  /** MySQL and H2: overwrite the record if it is still exactly as read (compare-and-set). */
  final SqlTemplate claimUpdate;

  /**
   * PostgreSQL: insert a fresh record unless the key has one, and return its fence and lease; no
   * row when the key exists, and nothing written or locked. A key whose record the statement's
   * snapshot shows is not even tried (an insert's conflict check would wait for a transaction that
   * holds the row's lock); one inserted since is skipped by the conflict clause. Its plan is a
   * fraction of {@link #claim}'s, which the server builds afresh for every execution. Null for the
   * other dialects.
   */
  final SqlTemplate claimFresh;

  /** CLAIMED with this fence → DONE until now + ttl. Also the last write of transactional mode. */
  final SqlTemplate markDone;

  /** CLAIMED with this fence → fence + 1 (1 after the maximum), lease = now, token cleared. */
  final SqlTemplate release;

  /** CLAIMED with this fence → lease = now + lease, retention moved along. */
  final SqlTemplate extend;

  /**
   * The whole record and the database clock: for inspect, and to tell why a write matched no row
   * (stale, DONE, absent or unreadable).
   */
  final SqlTemplate inspect;

  /** Delete the record. */
  final SqlTemplate forget;

  /** Delete up to :limit records whose expires_at has passed. */
  final SqlTemplate purge;

  /** A probe that fails if the table is missing. */
  final SqlTemplate probe;

  SqlStatements(SqlDialect dialect, String table) {
    this.dialect = dialect;
    this.table = TableName.requireValid(table);
    claimAll =
        dialect == SqlDialect.POSTGRESQL
            ? t(POSTGRES_CLAIM_ALL.replace("{take}", POSTGRES_TAKE))
            : null;
    claimFreshAll = dialect == SqlDialect.POSTGRESQL ? t(POSTGRES_CLAIM_FRESH_ALL) : null;
    switch (dialect) {
      case POSTGRESQL -> {
        claim = t(POSTGRES_CLAIM.replace("{take}", POSTGRES_TAKE));
        claimRead = null;
        claimInsert = null;
        claimUpdate = null;
        claimFresh =
            t(
                """
                INSERT INTO {table}
                  (lock_key, state, fence, lease_expiry, expires_at, claim_token, fingerprint)
                SELECT :key, 'CLAIMED', 1, {now} + :lease, {now} + :lease + :ttl, :token,
                       :fingerprint
                 WHERE NOT EXISTS (SELECT 1 FROM {table} t WHERE t.lock_key = :key)
                ON CONFLICT (lock_key) DO NOTHING
                RETURNING fence, lease_expiry
                """);
      }
      case MARIADB -> {
        claim = t(MARIADB_CLAIM.replace("{won}", MARIADB_WON));
        claimRead = null;
        claimInsert = null;
        claimUpdate = null;
        claimFresh = null;
      }
      case MYSQL, H2 -> {
        claim = null;
        claimRead =
            t(
                """
                SELECT n.now_ms, t.lock_key IS NOT NULL AS found, t.state, t.fence,
                       t.lease_expiry, t.expires_at, t.claim_token, t.fingerprint
                  FROM (SELECT {now} AS now_ms) n LEFT JOIN {table} t ON t.lock_key = :key
                """);
        claimInsert =
            t(
                """
                INSERT INTO {table}
                  (lock_key, state, fence, lease_expiry, expires_at, claim_token, fingerprint)
                VALUES (:key, 'CLAIMED', 1, :lease_expiry, :expires_at, :token, :fingerprint)
                """);
        claimUpdate =
            t(
                """
                UPDATE {table}
                   SET state = 'CLAIMED', fence = :new_fence, lease_expiry = :lease_expiry,
                       expires_at = :expires_at, claim_token = :token, fingerprint = :fingerprint
                 WHERE lock_key = :key AND state = :old_state AND fence = :old_fence
                   AND lease_expiry = :old_lease_expiry AND expires_at = :old_expires_at
                """);
        claimFresh = null;
      }
      default -> throw new IllegalArgumentException("unknown dialect " + dialect);
    }
    markDone =
        t(
            """
            UPDATE {table} SET state = 'DONE', expires_at = {now} + :ttl
             WHERE lock_key = :key AND state = 'CLAIMED' AND fence = :fence AND {valid}
            """);
    // expires_at first: MySQL assigns left to right, and its new value needs the old lease.
    extend =
        t(
            """
            UPDATE {table}
               SET expires_at = expires_at - lease_expiry + {now} + :lease,
                   lease_expiry = {now} + :lease
             WHERE lock_key = :key AND state = 'CLAIMED' AND fence = :fence AND {valid}
            """);
    release =
        t(
            """
            UPDATE {table}
               SET fence = CASE WHEN fence >= {max} THEN 1 ELSE fence + 1 END,
                   lease_expiry = {now}, claim_token = NULL
             WHERE lock_key = :key AND state = 'CLAIMED' AND fence = :fence AND {valid}
            """);
    inspect = t("SELECT " + COLUMNS + ", {now} AS now_ms FROM {table} WHERE lock_key = :key");
    forget = t("DELETE FROM {table} WHERE lock_key = :key");
    purge =
        switch (dialect) {
          // SKIP LOCKED: rows a claim is rewriting right now are left for the next call.
          case POSTGRESQL ->
              t(
                  """
                  DELETE FROM {table}
                   WHERE lock_key IN (SELECT lock_key FROM {table} WHERE expires_at <= {now}
                                       LIMIT :limit FOR UPDATE SKIP LOCKED)
                     AND expires_at <= {now}
                  """);
          case MARIADB, MYSQL ->
              t("DELETE FROM {table} WHERE expires_at <= {now} ORDER BY expires_at LIMIT :limit");
          case H2 ->
              t("DELETE FROM {table} WHERE expires_at <= {now} FETCH FIRST :limit ROWS ONLY");
        };
    probe = t("SELECT COUNT(*) FROM {table} WHERE 1 = 0");
  }

  /**
   * MariaDB and MySQL: the claim of {@code n} keys as one multi-row upsert ({@code :key0}, {@code
   * :lease0}, {@code :ttl0}, {@code :token0}, {@code :fingerprint0}, ...): {@link #MARIADB_CLAIM}
   * with each row's own values read through {@code VALUES(column)}. With {@code RETURNING}
   * (MariaDB) it returns every requested row as it now stands; without (MySQL) the caller reads
   * them back with {@link #selectRows} in the same transaction. Built once per size.
   */
  SqlTemplate upsertAll(int n) {
    return cached(upserts, n, () -> buildUpsertAll(n));
  }

  /** MariaDB, MySQL and H2: the records of {@code n} keys ({@code :key0}, ...), by key. */
  SqlTemplate selectRows(int n) {
    return cached(
        selects,
        n,
        () ->
            t(
                "SELECT lock_key, "
                    + COLUMNS
                    + ", {now} AS now_ms FROM {table} WHERE lock_key IN ("
                    + list(n, i -> ":key" + i)
                    + ")"));
  }

  /**
   * MariaDB, MySQL and H2: {@link #markDone} for {@code n} claims in one {@code UPDATE} ({@code
   * :key0}, {@code :fence0}, {@code :ttl0}, ...); the count of rows it changed tells whether every
   * claim was marked. The {@code IN} list keeps it to primary-key lookups (no scan, so no waiting
   * on rows of other keys).
   */
  SqlTemplate markDoneAll(int n) {
    return cached(
        markDones,
        n,
        () ->
            t(
                "UPDATE {table} SET state = 'DONE', expires_at = {now} + CASE lock_key "
                    + list(n, i -> "WHEN :key" + i + " THEN :ttl" + i).replace(",", "")
                    + " END WHERE lock_key IN ("
                    + list(n, i -> ":key" + i)
                    + ") AND state = 'CLAIMED' AND {valid} AND ("
                    + list(n, i -> "(lock_key = :key" + i + " AND fence = :fence" + i + ")")
                        .replace(", ", " OR ")
                    + ")"));
  }

  private SqlTemplate buildUpsertAll(int n) {
    String won = MARIADB_WON.replace(":token", "VALUES(claim_token)");
    String text =
        "INSERT INTO {table} (lock_key, state, fence, lease_expiry, expires_at, claim_token,"
            + " fingerprint) VALUES "
            + list(
                n,
                i ->
                    ("(:key{i}, 'CLAIMED', 1, {now} + :lease{i}, {now} + :lease{i} + :ttl{i},"
                            + " :token{i}, :fingerprint{i})")
                        .replace("{i}", Integer.toString(i)))
            + """

            ON DUPLICATE KEY UPDATE
              fence = IF({won},
                         IF(state = 'CLAIMED' AND claim_token = VALUES(claim_token)
                            AND {now} < expires_at, fence, IF(fence >= {max}, 1, fence + 1)),
                         fence),
              fingerprint = IF({won}, VALUES(fingerprint), fingerprint),
              claim_token = IF({won}, VALUES(claim_token), claim_token),
              state = IF({won}, 'CLAIMED', state),
              expires_at = IF({won}, VALUES(expires_at), expires_at),
              lease_expiry = IF({won}, VALUES(lease_expiry), lease_expiry)
            """
                .replace("{won}", won)
            + (dialect == SqlDialect.MARIADB ? "RETURNING lock_key, " + COLUMNS : "");
    return t(text);
  }

  private static String list(int n, IntFunction<String> item) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < n; i++) {
      if (i > 0) {
        b.append(", ");
      }
      b.append(item.apply(i));
    }
    return b.toString();
  }

  private static SqlTemplate cached(
      AtomicReferenceArray<SqlTemplate> cache, int n, Supplier<SqlTemplate> build) {
    if (n < 1 || n > MAX_BATCH) {
      throw new IllegalArgumentException("batch size must be 1 to " + MAX_BATCH + ": " + n);
    }
    SqlTemplate t = cache.get(n);
    if (t == null) {
      t = build.get();
      cache.compareAndSet(n, null, t);
    }
    return t;
  }

  /** The dialect these statements are written in. */
  SqlDialect dialect() {
    return dialect;
  }

  /** The table they work on. */
  String table() {
    return table;
  }

  private SqlTemplate t(String text) {
    String expanded =
        VALID
            .matcher(text)
            .replaceAll(m -> Matcher.quoteReplacement(valid(m.group(1) == null ? "" : m.group(1))));
    return SqlTemplate.parse(
        expanded
            .replace("{now}", now())
            .replace("{table}", table)
            .replace("{max}", Long.toString(LockBackend.MAX_FENCE))
            .strip());
  }

  /** The row test of {@link #VALID} in this dialect, on columns qualified by {@code alias}. */
  private String valid(String alias) {
    String a = alias.isEmpty() ? "" : alias + ".";
    String max = Long.toString(LockBackend.MAX_FENCE);
    String maxTime = Long.toString(LockBackend.MAX_EPOCH_MILLIS);
    // Exactly CLAIMED or DONE: byte-wise on MySQL-family, whose collations may ignore case and
    // trailing spaces; PostgreSQL and H2 compare varchar exactly.
    String state =
        switch (dialect) {
          case MARIADB, MYSQL -> "CAST(" + a + "state AS BINARY) IN ('CLAIMED', 'DONE')";
          case POSTGRESQL, H2 -> a + "state IN ('CLAIMED', 'DONE')";
        };
    String chars =
        switch (dialect) {
          case POSTGRESQL -> a + "claim_token ~ '" + TOKEN_CHARS + "'";
          case MARIADB, MYSQL -> a + "claim_token REGEXP '" + TOKEN_CHARS + "'";
          case H2 -> "REGEXP_LIKE(" + a + "claim_token, '" + TOKEN_CHARS + "')";
        };
    String token = "(CHAR_LENGTH(" + a + "claim_token) BETWEEN 1 AND 128 AND " + chars + ")";
    // The ranges test "column + 0", which no index serves: otherwise a plan made while the table
    // was empty (PostgreSQL caches one per connection once a statement was prepared) may read the
    // expires_at index over its whole range for every call, instead of the primary key.
    return "("
        + state
        + " AND ("
        + a
        + "fence + 0) BETWEEN 1 AND "
        + max
        + " AND ("
        + a
        + "lease_expiry + 0) BETWEEN 0 AND "
        + maxTime
        + " AND ("
        + a
        + "expires_at + 0) BETWEEN 0 AND "
        + maxTime
        + " AND ("
        + a
        + "claim_token IS NULL OR "
        + token
        + "))";
  }

  /** The database clock in epoch milliseconds, plus the bound test offset. */
  private String now() {
    return switch (dialect) {
      case POSTGRESQL ->
          "(floor(extract(epoch FROM statement_timestamp()) * 1000)::bigint + :offset)";
      case MARIADB, MYSQL ->
          "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(3)) DIV 1000 + :offset)";
      case H2 ->
          "(DATEDIFF(MILLISECOND, TIMESTAMP WITH TIME ZONE '1970-01-01 00:00:00+00',"
              + " CURRENT_TIMESTAMP(3)) + :offset)";
    };
  }
}
