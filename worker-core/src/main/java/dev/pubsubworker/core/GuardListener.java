package dev.pubsubworker.core;

import java.time.Duration;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * Observes what the guard does, for metrics and audit. Every method has an empty default, so a
 * listener implements only what it needs.
 *
 * <p>Contract: listeners are called synchronously on the thread where the event happened (the
 * caller's thread, or the shared heartbeat scheduler for extensions), so they must be fast and
 * thread-safe. A listener that throws is logged and ignored: observation never changes control
 * flow.
 */
public interface GuardListener {

  /** The store verbs, for {@link #backendCall}. */
  enum Verb {
    CLAIM,
    COMPLETE,
    RELEASE,
    EXTEND
  }

  /** Why a lease was lost, for {@link #leaseLost}. */
  enum LeaseLoss {
    /** An extension found the fence stale: another claim took the key. */
    FENCE_STALE,
    /** Extensions failed in the store until the lease ran out. */
    STORE_UNREACHABLE,
    /**
     * The lease ran out on the guard's clock before an extension confirmed it: the claim call took
     * the whole lease, an extension was still waiting for the store when it ran out, the heartbeat
     * was late, or (with the heartbeat off) the work outlived it.
     */
    EXPIRED
  }

  /** A claim was won; the work is about to run. */
  default void claimed(String key, long fence, boolean reclaim) {}

  /** {@code lock} found the key DONE and skipped the work. */
  default void duplicate(String key) {}

  /**
   * The key was held by another live claim (or, for a mutex, DONE) and the work did not run.
   *
   * @param leaseExpiry the holder's lease expiry on the backend clock, or null when DONE
   */
  default void contended(String key, @Nullable Instant leaseExpiry) {}

  /** DONE was recorded after the work ran for {@code workTime}. */
  default void completed(String key, long fence, Duration workTime) {}

  /**
   * The claim was released: after a mutex's work, or after work that threw.
   *
   * @param afterFailure true if the work threw
   */
  default void released(String key, long fence, boolean afterFailure) {}

  /** The heartbeat extended the lease. */
  default void leaseExtended(String key, long fence) {}

  /** The lease was lost while the work ran. */
  default void leaseLost(String key, long fence, LeaseLoss cause) {}

  /** The work succeeded but {@code complete} found the fence stale. */
  default void fencedOut(String key, long fence) {}

  /**
   * A transactional work's commit found the fence stale: its transaction was rolled back, so its
   * effects are gone and the new holder runs the work (unlike {@link #fencedOut}, nothing ran
   * twice).
   */
  default void fencedOutRolledBack(String key, long fence) {}

  /** The work succeeded but {@code complete} (or a mutex's release) failed in the store. */
  default void completeFailed(String key, long fence, RuntimeException error) {}

  /** A delivery's fingerprint differed from the stored one. */
  default void fingerprintMismatch(String key) {}

  /**
   * One store call finished.
   *
   * @param succeeded false if it threw
   */
  default void backendCall(Verb verb, Duration latency, boolean succeeded) {}

  /**
   * One batch round trip finished (group commit: see {@link BatchLockBackend}). Each entry of the
   * batch is also reported as one {@link #backendCall} of its verb, timed from its caller's start,
   * so call counts and latencies read the same with or without batching; this event adds how many
   * entries shared the round trip. A lone call goes through the single verb and is not reported
   * here.
   *
   * @param size the entries in the batch, at least 2
   * @param latency the round trip's duration
   * @param succeeded false if the round trip failed as a whole
   */
  default void batch(Verb verb, int size, Duration latency, boolean succeeded) {}
}
