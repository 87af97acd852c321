package dev.pubsubworker.backend.sql;

import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.LockRecord;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PostgreSQL: a plain insert for a key that has no record, else the upsert.
 *
 * <p>Most claims are of keys never seen (each message's first delivery), so a claim first sends
 * {@link SqlStatements#claimFresh}: an {@code INSERT ... ON CONFLICT DO NOTHING RETURNING}, whose
 * plan costs the server a fraction of the upsert's. It wins when it returns a row; when the key
 * exists it wrote nothing, and the upsert decides. While most recent claims found their key
 * existing (a redelivery storm, a hot key), the insert is skipped and the upsert sent at once,
 * except for one claim in {@value #PROBE_EVERY}, which measures again. The batch claim ({@link
 * BatchVerbs}) does the same with its batches and shares the measure.
 *
 * <p>The upsert wins, or the same statement returns the row as its snapshot saw it. No row at all
 * means a concurrent claim inserted the key after the snapshot was taken; a reclaimable snapshot
 * row that the upsert did not take means a concurrent claim took it first. Both are asked again.
 */
final class PostgresUpsertClaim implements ClaimStrategy {

  private static final Logger log = LoggerFactory.getLogger(PostgresUpsertClaim.class);

  /** Fixed-point one of {@link #existingShare}. */
  static final int ONE = 1 << 10;

  /** Above this share of recent inserts that found the key existing, the upsert goes first. */
  static final int SKIP_INSERT_ABOVE = ONE / 4;

  /** While the insert is skipped, one claim in this many still tries it. */
  static final int PROBE_EVERY = 16;

  private final LockTable table;

  /**
   * The share of recent first inserts that found the key existing, times {@link #ONE}: an
   * exponentially weighted mean, each attempt weighing 1/16.
   */
  private final AtomicInteger existingShare = new AtomicInteger();

  private final AtomicInteger skips = new AtomicInteger();

  PostgresUpsertClaim(LockTable table) {
    this.table = table;
  }

  @Override
  public ClaimResult claim(Connection c, ClaimRequest r) throws SQLException {
    if (insertFirst()) {
      try (PreparedStatement ps =
              table.prepare(c, table.sql().claimFresh, ClaimStrategy.claimParams(table, r));
          ResultSet rs = table.query(ps)) {
        boolean inserted = rs.next();
        recordInsert(inserted);
        if (inserted) {
          return ClaimStrategy.won(r, rs.getLong("fence"), rs.getLong("lease_expiry"));
        }
      }
    }
    for (int round = 0; round < MAX_RACE_ROUNDS; round++) {
      try (PreparedStatement ps =
              table.prepare(c, table.sql().claim, ClaimStrategy.claimParams(table, r));
          ResultSet rs = table.query(ps)) {
        if (!rs.next()) {
          log.debug(
              "claim on {}: the key was inserted concurrently; asking again", table.namespace());
          continue;
        }
        if (rs.getBoolean("won")) {
          return ClaimStrategy.won(r, rs.getLong("fence"), rs.getLong("lease_expiry"));
        }
        // The snapshot row, read strictly: an unreadable one is the answer (the upsert left it).
        LockRecord row = StoredRow.read(rs, r.key(), Instant.EPOCH, table, "claim");
        ClaimResult answer = ClaimStrategy.contended(row, rs.getLong("now_ms"));
        if (answer != null) {
          return answer;
        }
        log.debug(
            "claim on {}: a concurrent claim took the key first; asking again", table.namespace());
      }
    }
    throw ClaimStrategy.raceLost(table);
  }

  /** Counts one key a first insert tried: inserted, or found existing. */
  void recordInsert(boolean inserted) {
    existingShare.updateAndGet(s -> inserted ? s - (s >> 4) : s + ((ONE - s) >> 4));
  }

  /** Whether this claim (or batch of claims) sends the plain insert first. */
  boolean insertFirst() {
    return existingShare.get() <= SKIP_INSERT_ABOVE || skips.incrementAndGet() % PROBE_EVERY == 0;
  }
}
