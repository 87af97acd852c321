package dev.pubsubworker.runtime.config;

/** The lock store a worker uses ({@code pubsub-worker.lock-store.type}). */
public enum LockStoreType {
  /** Process-local memory: tests and single-instance demos only. */
  IN_MEMORY,
  /** Redis or Memorystore. */
  REDIS,
  /** PostgreSQL, MySQL/MariaDB or H2 through JDBC. */
  SQL,
  /** Firestore in Datastore mode. */
  DATASTORE
}
