package dev.pubsubworker.testkit.guard;

import dev.pubsubworker.backend.memory.InMemoryLockBackend;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.InvalidLockRecordException;
import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.core.LockRecord;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The in-memory backend with failures a test can script: a store that fails after writing, an
 * extension that finds a stale fence, a complete or release that throws. Counts every call.
 */
class ScriptedBackend implements LockBackend, LockAdmin {

  final InMemoryLockBackend store;
  final AtomicInteger claims = new AtomicInteger();
  final AtomicInteger extends_ = new AtomicInteger();
  final AtomicInteger completes = new AtomicInteger();
  final AtomicInteger releases = new AtomicInteger();

  /** Claims that write and then lose their response (throw). */
  final AtomicInteger claimsLosingResponse = new AtomicInteger();

  /** Claims that fail before writing. */
  final AtomicInteger claimsFailing = new AtomicInteger();

  /** Runs inside every claim, after the store answered: a slow response (advance a clock). */
  volatile Runnable duringClaim = () -> {};

  /** Runs inside every extension before the store sees it: a slow call (advance a clock). */
  volatile Runnable duringExtend = () -> {};

  volatile boolean extendFails;
  volatile boolean extendStale;
  volatile boolean claimUnreadable;
  volatile boolean extendUnreadable;
  volatile boolean completeFails;
  volatile boolean releaseFails;

  ScriptedBackend(Clock clock) {
    this.store = new InMemoryLockBackend(clock);
  }

  @Override
  public int maxKeyBytes() {
    return store.maxKeyBytes();
  }

  @Override
  public ClaimResult claim(ClaimRequest request) {
    validateKey(request.key());
    claims.incrementAndGet();
    if (claimUnreadable) {
      throw unreadable("claim", request.key());
    }
    if (claimsFailing.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
      throw new LockBackendException(
          "claim failed on scripted store", new RuntimeException("down"));
    }
    ClaimResult result = store.claim(request);
    duringClaim.run();
    if (claimsLosingResponse.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
      throw new LockBackendException("claim response lost on scripted store");
    }
    return result;
  }

  @Override
  public boolean complete(Claim claim, Duration ttl) {
    completes.incrementAndGet();
    if (completeFails) {
      throw new LockBackendException("complete failed on scripted store");
    }
    return store.complete(claim, ttl);
  }

  @Override
  public void release(Claim claim) {
    releases.incrementAndGet();
    if (releaseFails) {
      throw new LockBackendException("release failed on scripted store");
    }
    store.release(claim);
  }

  @Override
  public boolean extend(Claim claim, Duration lease) {
    extends_.incrementAndGet();
    duringExtend.run();
    if (extendUnreadable) {
      throw unreadable("extend", claim.key());
    }
    if (extendFails) {
      throw new LockBackendException("extend failed on scripted store");
    }
    if (extendStale) {
      return false;
    }
    return store.extend(claim, lease);
  }

  private static InvalidLockRecordException unreadable(String verb, String key) {
    return new InvalidLockRecordException(
        verb + " failed on scripted store", key, "state 'X' is neither CLAIMED nor DONE", Map.of());
  }

  @Override
  public Optional<LockRecord> inspect(String key) {
    return store.inspect(key);
  }

  @Override
  public boolean forget(String key) {
    return store.forget(key);
  }

  @Override
  public int purgeExpired(int limit) {
    return store.purgeExpired(limit);
  }
}
