package dev.pubsubworker.app.demo;

/** The lock stores the demo can run on ({@code --backend}). */
public enum DemoBackend {
  /** Process memory. */
  IN_MEMORY,
  /** An embedded H2 database in memory (the default: nothing to install). */
  H2,
  /** Redis at {@code --store-url}, by default redis://127.0.0.1:6379. */
  REDIS,
  /**
   * PostgreSQL at {@code --store-url}, by default jdbc:postgresql://127.0.0.1:5432/test as
   * postgres.
   */
  POSTGRES,
  /** Google's Datastore emulator, started by the demo (or DATASTORE_EMULATOR_HOST). */
  DATASTORE
}
