package dev.pubsubworker.testkit;

import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackend;
import java.time.Duration;

/**
 * What a backend's test hands the contract suites: the backend under test, its admin view, and a
 * way to move the clock the backend judges expiry on.
 *
 * <p>{@link #advanceClock} must move the backend's own clock deterministically, without sleeping:
 * an injected {@link java.time.Clock} for backends that judge time locally, a test-only offset
 * added to the server's clock for those that judge it on the server (Redis {@code TIME}, the
 * database's {@code now()}). The suites never move the clock backwards. Records from other tests
 * may share the store: the suites use unique keys and never assume an empty store.
 */
public interface BackendFixture extends AutoCloseable {

  /** The backend under test; the same instance for the fixture's lifetime. */
  LockBackend backend();

  /** The admin view of the same store (usually the same object as {@link #backend()}). */
  LockAdmin admin();

  /**
   * Moves the backend's clock forward by {@code amount}, for every later verb.
   *
   * @param amount positive
   */
  void advanceClock(Duration amount);

  /**
   * A second backend instance on the same store and the same clock (a separate client, as a second
   * worker process would have), for tests of cross-instance behaviour. The default returns {@link
   * #backend()}.
   */
  default LockBackend secondInstance() {
    return backend();
  }

  /** Releases the fixture's resources. The default does nothing. */
  @Override
  default void close() {}
}
