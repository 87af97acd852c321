package dev.pubsubworker.core;

import java.time.Duration;

/**
 * The port a lock store implements: the four verbs of the record state machine that must be atomic
 * in the store (SPEC §3). Leases, heartbeats, error policy and observation live once in {@link
 * IdempotencyGuard}; a backend only stores.
 *
 * <h2>The record</h2>
 *
 * A key maps to at most one record: {@code state} (CLAIMED | DONE), {@code fence}, {@code
 * leaseExpiry}, {@code expiresAt} (end of the duplicate-suppression window; while CLAIMED, {@code
 * leaseExpiry + ttl}), {@code claimToken} and an optional {@code fingerprint}. Expiry is judged
 * lazily, at read time, against one clock per backend (the server's where it has one).
 *
 * <table>
 *   <caption>Transitions every implementation guarantees</caption>
 *   <tr><th>from</th><th>call</th><th>guard</th><th>to</th><th>returns</th><th>fence</th></tr>
 *   <tr><td>absent</td><td>claim</td><td>—</td><td>CLAIMED</td><td>Won</td><td>1</td></tr>
 *   <tr><td>CLAIMED</td><td>claim</td><td>same claim token</td><td>CLAIMED, lease renewed</td>
 *       <td>Won</td><td>same</td></tr>
 *   <tr><td>CLAIMED</td><td>claim</td><td>now &lt; leaseExpiry</td><td>CLAIMED</td>
 *       <td>HeldByOther</td><td>same</td></tr>
 *   <tr><td>CLAIMED</td><td>claim</td><td>now ≥ leaseExpiry</td><td>CLAIMED</td><td>Won</td>
 *       <td>+1</td></tr>
 *   <tr><td>CLAIMED</td><td>extend</td><td>fence matches</td><td>leaseExpiry = now + lease</td>
 *       <td>true</td><td>same</td></tr>
 *   <tr><td>CLAIMED</td><td>complete</td><td>fence matches (no lease check)</td>
 *       <td>DONE, expiresAt = now + ttl</td><td>true</td><td>same</td></tr>
 *   <tr><td>CLAIMED</td><td>release</td><td>fence matches</td>
 *       <td>CLAIMED, leaseExpiry = now, claim token cleared</td><td>—</td><td>+1</td></tr>
 *   <tr><td>CLAIMED</td><td>complete / release / extend</td><td>fence stale</td><td>unchanged</td>
 *       <td>false / — / false</td><td>same</td></tr>
 *   <tr><td>DONE</td><td>claim</td><td>now &lt; expiresAt</td><td>DONE</td><td>AlreadyDone</td>
 *       <td>same</td></tr>
 *   <tr><td>DONE</td><td>claim</td><td>now ≥ expiresAt</td><td>CLAIMED</td><td>Won</td>
 *       <td>+1</td></tr>
 *   <tr><td>DONE</td><td>complete / release / extend</td><td>any</td><td>DONE</td>
 *       <td>true / — / false</td><td>same</td></tr>
 *   <tr><td>absent</td><td>complete / release / extend</td><td>—</td><td>absent</td>
 *       <td>false / — / false</td><td>—</td></tr>
 * </table>
 *
 * <p>Invariants: the fence only rises while a record exists; release never deletes (deleting would
 * reset the fence: ABA); a record is physically removed only after {@code expiresAt}; of N
 * concurrent claims on an absent or reclaimable key exactly one wins.
 *
 * <h2>Errors</h2>
 *
 * Every verb validates its key first ({@link #validateKey}), before any I/O, and throws {@link
 * IllegalArgumentException} for a bad one. A store failure (unreachable, timeout, a transaction
 * that could not commit after the backend's bounded retries) is a {@link LockBackendException}
 * carrying the cause; it is never reported as {@link ClaimResult.HeldByOther} or {@code false}.
 *
 * <p>Implementations are thread-safe: one instance serves every concurrent handler of a process.
 */
public interface LockBackend extends AutoCloseable {

  /** The key length every shipped backend supports at least, in UTF-8 bytes. */
  int MIN_SUPPORTED_KEY_BYTES = 1024;

  /**
   * Claims the key: creates the record, reclaims a lapsed one, re-affirms the caller's own claim
   * (same claim token), or reports who has it.
   *
   * @return Won, AlreadyDone or HeldByOther, decided atomically in the store
   * @throws IllegalArgumentException if the key is invalid for this backend (before any I/O)
   * @throws LockBackendException if the store failed; the claim may or may not have been written,
   *     which is why a retry with the same claim token is safe
   */
  ClaimResult claim(ClaimRequest request);

  /**
   * Shorthand for {@code claim(ClaimRequest.of(key, lease, claimToken))}: the {@link
   * IdempotencyGuard#DEFAULT_TTL} and no fingerprint.
   */
  default ClaimResult claim(String key, Duration lease, String claimToken) {
    return claim(ClaimRequest.of(key, lease, claimToken));
  }

  /**
   * Marks the claimed key DONE until {@code now + ttl}, if the claim's fence still matches. There
   * is no lease check: a holder whose lease lapsed but whose key was not reclaimed is still the
   * only one that ran the work, so its DONE must commit.
   *
   * @param ttl the duplicate-suppression window, at least one millisecond
   * @return true if the record is now DONE under this claim or was already DONE; false if the fence
   *     is stale (reclaimed or released) or the record is gone
   * @throws LockBackendException if the store failed; the outcome is then unknown
   */
  boolean complete(Claim claim, Duration ttl);

  /**
   * Gives the key up: sets the lease to now and raises the fence, so the key is reclaimable at once
   * and this claim can never complete. No-op if the fence is stale, the record is DONE, or absent.
   * Never deletes.
   *
   * @throws LockBackendException if the store failed
   */
  void release(Claim claim);

  /**
   * Renews the lease to {@code now + lease} (and the CLAIMED record's retention with it) if the
   * claim's fence still matches and the record is CLAIMED.
   *
   * @return true if renewed; false if the fence is stale, or the record is DONE or absent
   * @throws LockBackendException if the store failed
   */
  boolean extend(Claim claim, Duration lease);

  /**
   * The longest key this backend stores, in UTF-8 bytes; at least {@link #MIN_SUPPORTED_KEY_BYTES}.
   */
  default int maxKeyBytes() {
    return MIN_SUPPORTED_KEY_BYTES;
  }

  /**
   * Checks a key before any I/O. The default applies {@link LockKeys#requireValid} with {@link
   * #maxKeyBytes()}; a backend with further rules (a reserved pattern, say) overrides this and
   * calls the default first.
   *
   * @throws NullPointerException if key is null
   * @throws IllegalArgumentException naming the problem: empty, too long (with the limit), or not
   *     well-formed UTF-16
   */
  default void validateKey(String key) {
    LockKeys.requireValid(key, maxKeyBytes());
  }

  /**
   * Releases what the backend opened itself (connections, threads). Resources the caller passed in
   * (a {@code DataSource}, a client) are left open. Records are untouched. The default does
   * nothing.
   */
  @Override
  default void close() {}
}
