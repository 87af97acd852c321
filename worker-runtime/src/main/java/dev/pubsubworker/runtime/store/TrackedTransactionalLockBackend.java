package dev.pubsubworker.runtime.store;

import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.TransactionalLockBackend;
import java.time.Duration;

/**
 * A tracked {@link TransactionalLockBackend}: a transactional run counts as a store call while the
 * store works (beginning the transaction; writing DONE and committing), not while the handler's
 * work runs inside it.
 */
class TrackedTransactionalLockBackend extends TrackedLockBackend
    implements TransactionalLockBackend {

  static final String TRANSACTION = "transaction";

  private final TransactionalLockBackend delegate;

  TrackedTransactionalLockBackend(TransactionalLockBackend delegate, LockStoreCalls calls) {
    super(delegate, calls);
    this.delegate = delegate;
  }

  @Override
  public <T> Result<T> runAndComplete(Claim claim, Duration ttl, TransactionBody<T> body)
      throws Exception {
    // The id of the store's part in progress, 0 while the work runs. Only this thread touches it.
    long[] current = {calls.begin(TRANSACTION)};
    try {
      return delegate.runAndComplete(
          claim,
          ttl,
          resource -> {
            calls.end(current[0]);
            current[0] = 0;
            try {
              return body.run(resource);
            } finally {
              current[0] = calls.begin(TRANSACTION);
            }
          });
    } finally {
      if (current[0] != 0) {
        calls.end(current[0]);
      }
    }
  }
}
