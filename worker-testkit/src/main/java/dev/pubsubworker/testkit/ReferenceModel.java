package dev.pubsubworker.testkit;

import dev.pubsubworker.core.LockState;
import java.util.HashMap;
import java.util.Map;

/**
 * The record state machine of {@link dev.pubsubworker.core.LockBackend} as a plain in-memory model
 * on a virtual millisecond clock: what every backend must agree with, verb by verb, in {@link
 * LockBackendModelContract}. Not thread-safe.
 */
final class ReferenceModel {

  /** A modelled record. */
  static final class Rec {
    LockState state;
    long fence;
    long leaseExpiry;
    long expiresAt;
    String token;

    Rec(LockState state, long fence, long leaseExpiry, long expiresAt, String token) {
      this.state = state;
      this.fence = fence;
      this.leaseExpiry = leaseExpiry;
      this.expiresAt = expiresAt;
      this.token = token;
    }

    @Override
    public String toString() {
      return state + "(fence " + fence + ", lease " + leaseExpiry + ", expires " + expiresAt + ")";
    }
  }

  /** A modelled claim result: kind plus fence for Won. */
  record Result(String kind, long fence) {
    static final Result HELD = new Result("HeldByOther", 0);
    static final Result DONE = new Result("AlreadyDone", 0);

    static Result won(long fence) {
      return new Result("Won", fence);
    }
  }

  private final Map<String, Rec> records = new HashMap<>();
  private long now;

  long now() {
    return now;
  }

  void advance(long millis) {
    now += millis;
  }

  Rec get(String key) {
    return records.get(key);
  }

  /** Whether the key's record has passed its expiresAt, so the store may have reaped it. */
  boolean mayBeGone(String key) {
    Rec r = records.get(key);
    return r != null && now >= r.expiresAt;
  }

  void drop(String key) {
    records.remove(key);
  }

  Result claim(String key, String token, long lease, long retention) {
    Rec r = records.get(key);
    if (r == null) {
      records.put(key, new Rec(LockState.CLAIMED, 1, now + lease, now + lease + retention, token));
      return Result.won(1);
    }
    if (r.state == LockState.CLAIMED && token.equals(r.token) && now < r.expiresAt) {
      r.leaseExpiry = now + lease;
      r.expiresAt = now + lease + retention;
      return Result.won(r.fence);
    }
    if (r.state == LockState.CLAIMED && now < r.leaseExpiry) {
      return Result.HELD;
    }
    if (r.state == LockState.DONE && now < r.expiresAt) {
      return Result.DONE;
    }
    r.state = LockState.CLAIMED;
    r.fence += 1;
    r.leaseExpiry = now + lease;
    r.expiresAt = now + lease + retention;
    r.token = token;
    return Result.won(r.fence);
  }

  boolean complete(String key, long fence, long ttl) {
    Rec r = records.get(key);
    if (r == null) {
      return false;
    }
    if (r.state == LockState.DONE) {
      return true;
    }
    if (r.fence != fence) {
      return false;
    }
    r.state = LockState.DONE;
    r.expiresAt = now + ttl;
    return true;
  }

  void release(String key, long fence) {
    Rec r = records.get(key);
    if (r != null && r.state == LockState.CLAIMED && r.fence == fence) {
      r.fence += 1;
      r.leaseExpiry = now;
      r.token = null;
    }
  }

  boolean extend(String key, long fence, long lease) {
    Rec r = records.get(key);
    if (r == null || r.state != LockState.CLAIMED || r.fence != fence) {
      return false;
    }
    long retention = r.expiresAt - r.leaseExpiry;
    r.leaseExpiry = now + lease;
    r.expiresAt = r.leaseExpiry + retention;
    return true;
  }

  boolean forget(String key) {
    return records.remove(key) != null;
  }

  /** Removes every record past its expiresAt, as a complete purge would. */
  void purgeExpired() {
    records.values().removeIf(r -> now >= r.expiresAt);
  }
}
