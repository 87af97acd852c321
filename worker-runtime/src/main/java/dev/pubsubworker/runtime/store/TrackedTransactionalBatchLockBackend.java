package dev.pubsubworker.runtime.store;

import dev.pubsubworker.core.BatchLockBackend;
import dev.pubsubworker.core.TransactionalLockBackend;

/**
 * A tracked backend that is both a {@link TransactionalLockBackend} (as {@link
 * TrackedTransactionalLockBackend}) and a {@link BatchLockBackend} (its batches tracked too).
 */
final class TrackedTransactionalBatchLockBackend extends TrackedTransactionalLockBackend
    implements TrackedBatchVerbs {

  private final BatchLockBackend batches;

  <B extends TransactionalLockBackend & BatchLockBackend> TrackedTransactionalBatchLockBackend(
      B delegate, LockStoreCalls calls) {
    super(delegate, calls);
    this.batches = delegate;
  }

  @Override
  public BatchLockBackend batchDelegate() {
    return batches;
  }

  @Override
  public LockStoreCalls tracker() {
    return calls;
  }
}
