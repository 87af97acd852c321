package dev.pubsubworker.core;

/**
 * The two stored states of a lock record (see {@link LockBackend}). "Reclaimable" is deliberately
 * not a state: it is what {@link LockBackend#claim} concludes at read time when a lease or the
 * suppression window has lapsed.
 */
public enum LockState {
  /** A claim holds (or held) the key; its lease says until when it is protected. */
  CLAIMED,
  /** The guarded work completed; further claims are duplicates until {@code expiresAt}. */
  DONE
}
