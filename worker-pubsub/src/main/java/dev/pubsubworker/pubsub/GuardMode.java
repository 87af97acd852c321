package dev.pubsubworker.pubsub;

/** How a {@link GuardedReceiver} runs its handler. */
public enum GuardMode {
  /**
   * De-duplicate ({@link dev.pubsubworker.core.IdempotencyGuard#lock}): at most once per key; a
   * redelivery or republish of a DONE key is acked without running the handler.
   */
  LOCK,
  /**
   * Serialize ({@link dev.pubsubworker.core.IdempotencyGuard#mutex}): every message runs, never two
   * of one key at once; nothing is marked DONE.
   */
  MUTEX,
  /** No guard: every delivery runs (for handlers that are idempotent on their own). */
  NONE
}
