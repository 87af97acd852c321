package dev.pubsubworker.backend.sql;

import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.core.LockRecord;
import dev.pubsubworker.core.LockState;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;

/**
 * How one dialect takes a key atomically: of concurrent claimers exactly one wins, also when they
 * all found the key absent, and a claim retried with the same claim token re-affirms its own claim.
 * One implementation per way the products can do it: {@link PostgresUpsertClaim} (PostgreSQL),
 * {@link MariaDbUpsertClaim} and {@link CompareAndSetClaim} (MySQL, H2). Each decides expiry by the
 * database's clock, read inside its statements.
 */
interface ClaimStrategy {

  /** How often a claim that lost a race to a concurrent claim reads and tries again. */
  int MAX_RACE_ROUNDS = 16;

  /**
   * Claims {@code request.key()} on {@code c} (in auto-commit mode).
   *
   * @throws SQLException as the driver threw it (the caller classifies and retries)
   * @throws dev.pubsubworker.core.InvalidLockRecordException if the key's row is unreadable;
   *     nothing was written
   * @throws LockBackendException if it lost {@value #MAX_RACE_ROUNDS} races in a row
   */
  ClaimResult claim(Connection c, ClaimRequest request) throws SQLException;

  /** The strategy of {@code table}'s dialect. */
  static ClaimStrategy of(LockTable table) {
    return switch (table.dialect()) {
      case POSTGRESQL -> new PostgresUpsertClaim(table);
      case MARIADB -> new MariaDbUpsertClaim(table);
      case MYSQL, H2 -> new CompareAndSetClaim(table);
    };
  }

  /** The parameters of a one-statement claim. */
  static SqlTemplate.Params claimParams(LockTable table, ClaimRequest r) {
    return table
        .params(r.key())
        .set("lease", r.lease().toMillis())
        .set("ttl", r.ttl().toMillis())
        .set("token", r.claimToken())
        .set("fingerprint", r.fingerprint());
  }

  /** HeldByOther or AlreadyDone for a live record; null if it is reclaimable at {@code now}. */
  static ClaimResult contended(LockRecord r, long now) {
    if (r.state() == LockState.CLAIMED && now < r.leaseExpiry().toEpochMilli()) {
      return new ClaimResult.HeldByOther(r.leaseExpiry(), r.fingerprint());
    }
    if (r.state() == LockState.DONE && now < r.expiresAt().toEpochMilli()) {
      return new ClaimResult.AlreadyDone(r.fingerprint());
    }
    return null;
  }

  /**
   * What a claim found on a row it did not win (the row as it stands): HeldByOther for a CLAIMED
   * row, AlreadyDone for a DONE one.
   */
  static ClaimResult refused(LockRecord r) {
    return r.state() == LockState.CLAIMED
        ? new ClaimResult.HeldByOther(r.leaseExpiry(), r.fingerprint())
        : new ClaimResult.AlreadyDone(r.fingerprint());
  }

  /** The fence after a reclaim: one more, or 1 after {@link LockBackend#MAX_FENCE}. */
  static long nextFence(long fence) {
    return fence >= LockBackend.MAX_FENCE ? 1 : fence + 1;
  }

  static ClaimResult won(ClaimRequest r, long fence, long leaseExpiry) {
    return new ClaimResult.Won(
        new Claim(r.key(), fence, Instant.ofEpochMilli(leaseExpiry), r.claimToken()));
  }

  static LockBackendException raceLost(LockTable table) {
    return new LockBackendException(
        "claim failed on "
            + table.namespace()
            + ": lost "
            + MAX_RACE_ROUNDS
            + " races in a row to concurrent claims on the same key");
  }
}
