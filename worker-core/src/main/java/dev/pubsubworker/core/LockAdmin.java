package dev.pubsubworker.core;

import java.util.Optional;

/**
 * Operator verbs on a lock store, kept apart from {@link LockBackend} because handlers never need
 * them. Every shipped backend implements both.
 *
 * <p>Errors follow {@link LockBackend}: a bad key is an {@link IllegalArgumentException} before any
 * I/O; a store failure is a {@link LockBackendException}.
 */
public interface LockAdmin {

  /**
   * Reads a key's record as stored, including one whose lease or suppression window has lapsed but
   * which has not been physically removed yet.
   *
   * @return the record, or empty if the key has none
   */
  Optional<LockRecord> inspect(String key);

  /**
   * Deletes the key's record, whatever its state, for a deliberate replay: the next delivery for
   * the key runs again (at fence 1). A holder still running on the key loses it: its complete,
   * release and extend are refused.
   *
   * @return true if a record was deleted
   */
  boolean forget(String key);

  /**
   * Physically removes up to {@code limit} records whose {@code expiresAt} has passed (DONE records
   * past their suppression window, CLAIMED records past lease + ttl). Records still within their
   * window are never touched. Backends whose store expires records on its own (Redis, a Datastore
   * TTL policy) still honour this call.
   *
   * @param limit the most records to remove in this call, at least 1
   * @return how many were removed; less than {@code limit} means none expired remain (at the time
   *     of the scan)
   * @throws IllegalArgumentException if {@code limit} is below 1
   */
  int purgeExpired(int limit);
}
