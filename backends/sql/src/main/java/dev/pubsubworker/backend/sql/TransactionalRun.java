package dev.pubsubworker.backend.sql;

import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.InvalidLockRecordException;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.core.TransactionalLockBackend.Result;
import dev.pubsubworker.core.TransactionalLockBackend.TransactionBody;
import dev.pubsubworker.core.TransactionalLockBackend.TransactionOutcome;
import java.sql.Connection;
import java.sql.SQLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One run of {@link SqlLockBackend#runAndComplete}: a connection borrowed and switched to manual
 * commit, the work run on a {@link WorkConnection} view of it, then, as the transaction's last
 * statement, DONE written under the claim's fence, and the commit; the work's writes and DONE
 * commit together or not at all. The backend's own statements (beginning, DONE, commit) are bounded
 * by the socket timeout; the work's run with the pool's network timeout, as they would on any other
 * connection of the pool. Transient errors are not retried: the work cannot be replayed.
 */
final class TransactionalRun {

  private static final Logger log = LoggerFactory.getLogger(TransactionalRun.class);
  private static final String VERB = "runAndComplete";

  private final LockTable table;

  TransactionalRun(LockTable table) {
    this.table = table;
  }

  /**
   * Runs {@code body} and marks {@code claim} DONE until now + {@code ttlMillis} in one
   * transaction.
   *
   * @throws Exception whatever the body threw, after the rollback
   * @throws LockBackendException if the transaction could not begin, mark DONE or commit
   */
  <T> Result<T> run(Claim claim, long ttlMillis, TransactionBody<T> body) throws Exception {
    Connection c;
    boolean autoCommit;
    try {
      c = table.borrow();
    } catch (SQLException e) {
      throw table.failure(VERB, e);
    }
    try {
      int poolNetworkTimeout = LockTable.networkTimeoutOf(c);
      table.boundSocket(c);
      autoCommit = c.getAutoCommit();
      if (autoCommit) {
        c.setAutoCommit(false);
      }
      LockTable.setNetworkTimeout(c, poolNetworkTimeout);
    } catch (SQLException e) {
      table.closeQuietly(c, e);
      throw table.failure(VERB, e);
    }
    WorkConnection work = WorkConnection.wrap(c);
    try {
      T value;
      try {
        value = body.run(work.proxy());
      } catch (Throwable t) {
        work.end();
        table.boundSocketQuietly(c, t);
        LockTable.rollbackQuietly(c, t);
        throw t;
      }
      work.end();
      return markDoneAndCommit(c, claim, ttlMillis, value);
    } finally {
      work.end();
      try {
        if (autoCommit && !c.isClosed()) {
          c.setAutoCommit(true);
        }
      } catch (SQLException e) {
        log.debug(
            "{}: could not restore auto-commit on {}; the pool resets it",
            VERB,
            table.namespace(),
            e);
      }
      table.closeQuietly(c, null);
    }
  }

  private <T> Result<T> markDoneAndCommit(Connection c, Claim claim, long ttlMillis, T value) {
    try {
      table.boundSocket(c);
    } catch (SQLException e) {
      LockTable.rollbackQuietly(c, e);
      throw table.failure(
          VERB + " (bounding the connection; the work's writes were rolled back)", e);
    }
    int marked;
    try {
      marked =
          table.update(
              c,
              table.sql().markDone,
              table.params(claim.key()).set("ttl", ttlMillis).set("fence", claim.fence()));
    } catch (SQLException e) {
      LockTable.rollbackQuietly(c, e);
      throw table.failure(VERB + " (marking DONE; the work's writes were rolled back)", e);
    }
    if (marked == 0) {
      InvalidLockRecordException unreadable = null;
      try {
        // A stale fence, unless the row became unreadable meanwhile: then say so.
        table.readRecord(c, claim.key(), VERB);
      } catch (InvalidLockRecordException e) {
        unreadable = e;
      } catch (SQLException e) {
        LockTable.rollbackQuietly(c, e);
        throw table.failure(VERB + " (reading the row; the work's writes were rolled back)", e);
      }
      try {
        c.rollback();
      } catch (SQLException e) {
        throw table.failure(VERB + " (rolling back after a stale fence)", e);
      }
      if (unreadable != null) {
        throw unreadable;
      }
      return new Result<>(value, TransactionOutcome.FENCED_OUT_ROLLED_BACK);
    }
    try {
      c.commit();
    } catch (SQLException e) {
      LockTable.rollbackQuietly(c, e);
      throw table.failure(
          VERB + " (commit; the work's writes and DONE either both committed or neither did)", e);
    }
    return new Result<>(value, TransactionOutcome.COMMITTED);
  }
}
