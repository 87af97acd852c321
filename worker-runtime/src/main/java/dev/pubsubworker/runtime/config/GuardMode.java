package dev.pubsubworker.runtime.config;

/** How a subscription's handler runs. */
public enum GuardMode {
  /** De-duplicate: at most once per key, a repeat is acked as a duplicate. */
  LOCK,
  /** Serialize: every message runs, one at a time per key. */
  MUTEX,
  /** No guard: every delivery runs (for handlers that are idempotent on their own). */
  NONE
}
