package dev.pubsubworker.core;

import java.time.Duration;

/**
 * A backend that can run guarded work inside the same store transaction that writes DONE, so the
 * work's own writes to that store and the DONE record commit or roll back together (no window in
 * which the effect is committed but DONE is not). Used by {@link IdempotencyGuard#lock} when {@link
 * CallOptions#transactional(boolean)} is on.
 *
 * <p>What it cannot do: a side effect outside the store (an HTTP call, an email) made inside the
 * work is not rolled back, so it stays at-least-once across a crash.
 */
public interface TransactionalLockBackend extends LockBackend {

  /** The outcome of {@link #runAndComplete}. */
  enum TransactionOutcome {
    /** The work's writes and DONE committed together. */
    COMMITTED,
    /** The claim's fence was stale at completion; everything was rolled back. */
    FENCED_OUT_ROLLED_BACK
  }

  /**
   * The work to run inside the transaction.
   *
   * @param <T> its result
   */
  @FunctionalInterface
  interface TransactionBody<T> {
    /**
     * Runs the work inside the open transaction.
     *
     * @param transactionResource the transaction's handle (for SQL, its {@code
     *     java.sql.Connection}), exposed to the work through {@link WorkContext#resource}
     */
    T run(Object transactionResource) throws Exception;
  }

  /** A body's result with the transaction's outcome. */
  record Result<T>(T value, TransactionOutcome outcome) {}

  /**
   * Begins a transaction, runs {@code body} in it, then — in the same transaction — marks the claim
   * DONE until now + ttl if its fence still matches, and commits. If the fence is stale, everything
   * is rolled back.
   *
   * @throws Exception whatever the body threw, after rolling back; the claim is left CLAIMED (the
   *     guard releases it)
   * @throws LockBackendException if the transaction could not begin or commit; if the commit's
   *     outcome is unknown, the work's writes and DONE either both exist or neither does
   */
  <T> Result<T> runAndComplete(Claim claim, Duration ttl, TransactionBody<T> body) throws Exception;
}
