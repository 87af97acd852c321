package dev.pubsubworker.runtime.store;

import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.LockBackend;
import java.time.Duration;
import java.util.concurrent.CompletionStage;

/**
 * A {@link LockBackend} that registers each call with {@link LockStoreCalls} while it runs and
 * otherwise delegates unchanged: results, exceptions and key rules are the delegate's.
 */
class TrackedLockBackend implements LockBackend {

  private final LockBackend delegate;
  final LockStoreCalls calls;

  TrackedLockBackend(LockBackend delegate, LockStoreCalls calls) {
    this.delegate = delegate;
    this.calls = calls;
  }

  @Override
  public ClaimResult claim(ClaimRequest request) {
    long call = calls.begin("claim");
    try {
      return delegate.claim(request);
    } finally {
      calls.end(call);
    }
  }

  @Override
  public boolean complete(Claim claim, Duration ttl) {
    long call = calls.begin("complete");
    try {
      return delegate.complete(claim, ttl);
    } finally {
      calls.end(call);
    }
  }

  /** Registered from the send until the stage completes, on whichever thread that is. */
  @Override
  public CompletionStage<Boolean> completeAsync(Claim claim, Duration ttl) {
    long call = calls.begin("complete");
    CompletionStage<Boolean> sent;
    try {
      sent = delegate.completeAsync(claim, ttl);
    } catch (RuntimeException | Error e) {
      calls.end(call);
      throw e;
    }
    return sent.whenComplete((completed, failure) -> calls.end(call));
  }

  @Override
  public void release(Claim claim) {
    long call = calls.begin("release");
    try {
      delegate.release(claim);
    } finally {
      calls.end(call);
    }
  }

  @Override
  public boolean extend(Claim claim, Duration lease) {
    long call = calls.begin("extend");
    try {
      return delegate.extend(claim, lease);
    } finally {
      calls.end(call);
    }
  }

  @Override
  public int maxKeyBytes() {
    return delegate.maxKeyBytes();
  }

  @Override
  public void validateKey(String key) {
    delegate.validateKey(key);
  }

  @Override
  public void close() {
    delegate.close();
  }

  @Override
  public String toString() {
    return delegate.toString();
  }
}
