package dev.pubsubworker.runtime.store;

import dev.pubsubworker.core.BatchLockBackend;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import java.util.List;

/**
 * The batch verbs of a tracked {@link BatchLockBackend}: each batch counts as one store call of its
 * verb ({@code claim}, {@code complete}) while it runs; the batch settings are the delegate's.
 * Mixed into the tracked wrappers so that wrapping a backend never takes its group commit away.
 */
interface TrackedBatchVerbs extends BatchLockBackend {

  /** The wrapped backend. */
  BatchLockBackend batchDelegate();

  /** Where the calls are recorded. */
  LockStoreCalls tracker();

  @Override
  default List<BatchResult<ClaimResult>> claimAll(List<ClaimRequest> requests) {
    long call = tracker().begin("claim");
    try {
      return batchDelegate().claimAll(requests);
    } finally {
      tracker().end(call);
    }
  }

  @Override
  default List<BatchResult<Boolean>> completeAll(List<CompleteRequest> requests) {
    long call = tracker().begin("complete");
    try {
      return batchDelegate().completeAll(requests);
    } finally {
      tracker().end(call);
    }
  }

  @Override
  default int maxBatchSize() {
    return batchDelegate().maxBatchSize();
  }

  @Override
  default int maxConcurrentBatches() {
    return batchDelegate().maxConcurrentBatches();
  }

  @Override
  default int maxConcurrentCalls() {
    return batchDelegate().maxConcurrentCalls();
  }

  @Override
  default boolean batchingByDefault() {
    return batchDelegate().batchingByDefault();
  }
}
