package dev.pubsubworker.core;

import java.util.Optional;

/**
 * Operator verbs on a lock store, kept apart from {@link LockBackend} because handlers never need
 * them. Every shipped backend implements both.
 *
 * <p>Errors follow {@link LockBackend}: a bad key is an {@link IllegalArgumentException} before any
 * I/O; a store failure is a {@link LockBackendException}. A record the backend cannot read (see
 * {@link LockBackend}, "Reading strictly") is shown by {@link #inspect} through the {@link
 * InvalidLockRecordException} it throws, and removed by {@link #forget} like any other.
 */
public interface LockAdmin {

  /**
   * Reads a key's record as stored, including one whose lease or suppression window has lapsed but
   * which has not been physically removed yet.
   *
   * @return the record, or empty if the key has none
   * @throws InvalidLockRecordException if the key's record is unreadable: its {@link
   *     InvalidLockRecordException#storedFields()} are every field the store holds for the key, as
   *     stored, and its {@link InvalidLockRecordException#problem()} says what is wrong
   */
  Optional<LockRecord> inspect(String key);

  /**
   * Deletes the key's record, whatever its state, for a deliberate replay: the next delivery for
   * the key runs again (at fence 1). A holder still running on the key loses it: its complete,
   * release and extend are refused. Removes an unreadable record too, whatever it holds (on Redis,
   * whatever value the key holds).
   *
   * @return true if a record was deleted
   */
  boolean forget(String key);

  /**
   * Physically removes up to {@code limit} records whose {@code expiresAt} has passed (DONE records
   * past their suppression window, CLAIMED records past lease + ttl). Records still within their
   * window are never touched. An unreadable record goes too once its {@code expiresAt} is a time
   * that has passed; one without a readable {@code expiresAt} is left alone and does not fail the
   * call. Backends whose store expires records on its own (Redis, a Datastore TTL policy) still
   * honour this call.
   *
   * @param limit the most records to remove in this call, at least 1
   * @return how many were removed; less than {@code limit} means none expired remain (at the time
   *     of the scan)
   * @throws IllegalArgumentException if {@code limit} is below 1
   */
  int purgeExpired(int limit);
}
