package dev.pubsubworker.testkit;

import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackend;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;

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

  /**
   * Writes a record for {@code key} straight into the store, in the store's own format and past the
   * backend's verbs, as another program (a migration, a hand edit, a bug) could have left it;
   * replaces whatever the key held. The contract suite uses it for records the backend must refuse
   * to read ({@link dev.pubsubworker.core.InvalidLockRecordException}) and for valid records at the
   * edges of the ranges (a fence of {@link LockBackend#MAX_FENCE}).
   *
   * <p>{@code fields} names the fields as {@link dev.pubsubworker.core.LockRecord#parse} does
   * ({@code state}, {@code fence}, {@code leaseExpiry}, {@code expiresAt}, {@code claimToken},
   * {@code fingerprint}); each value is the text to store, verbatim: numbers in decimal, times in
   * epoch milliseconds on the backend's clock. Store each in the type the backend writes for that
   * field where the text fits it (an integer column or property for {@code "7"}, a timestamp
   * property for a time), and as text where the store allows that (a hash field, a string
   * property). A field missing from {@code fields} is not stored (an absent hash field or property,
   * a NULL column).
   *
   * <p>If the store cannot hold what is asked (a non-numeric fence in an integer column, a field
   * its schema requires), abort the calling test through {@link Assumptions} with a message that
   * says why: the suite then skips that case for this store. A fixture may loosen its own schema
   * for this (drop a {@code CHECK} or a {@code NOT NULL}), as a table created by hand might be.
   *
   * <p>The default aborts every call, so that the suites still run against a fixture that does not
   * implement it (a third-party backend's, written before this method), skipping the
   * unreadable-record tests with a message that names this method.
   *
   * @param key the lock key, as the backend would store it
   * @param fields the record's fields as text, by name
   */
  default void writeRawRecord(String key, Map<String, String> fields) {
    Assumptions.abort(
        getClass().getName()
            + " does not implement BackendFixture.writeRawRecord, so the tests of records the"
            + " backend cannot read are skipped");
  }

  /** Releases the fixture's resources. The default does nothing. */
  @Override
  default void close() {}
}
