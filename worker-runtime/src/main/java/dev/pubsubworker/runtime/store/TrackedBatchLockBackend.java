package dev.pubsubworker.runtime.store;

import dev.pubsubworker.core.BatchLockBackend;

/** A tracked {@link BatchLockBackend}: single verbs as {@link TrackedLockBackend}, batches too. */
final class TrackedBatchLockBackend extends TrackedLockBackend implements TrackedBatchVerbs {

  private final BatchLockBackend delegate;

  TrackedBatchLockBackend(BatchLockBackend delegate, LockStoreCalls calls) {
    super(delegate, calls);
    this.delegate = delegate;
  }

  @Override
  public BatchLockBackend batchDelegate() {
    return delegate;
  }

  @Override
  public LockStoreCalls tracker() {
    return calls;
  }
}
