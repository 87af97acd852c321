package dev.pubsubworker.core;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The port a lock store implements: the four verbs of the record state machine that must be atomic
 * in the store (the table below; docs/design.md in the repository says why each row is so). Leases,
 * heartbeats, error policy and observation live once in {@link IdempotencyGuard}; a backend only
 * stores.
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
 *       <td>+1 (from MAX_FENCE: 1)</td></tr>
 *   <tr><td>CLAIMED</td><td>extend</td><td>fence matches</td><td>leaseExpiry = now + lease</td>
 *       <td>true</td><td>same</td></tr>
 *   <tr><td>CLAIMED</td><td>complete</td><td>fence matches (no lease check)</td>
 *       <td>DONE, expiresAt = now + ttl</td><td>true</td><td>same</td></tr>
 *   <tr><td>CLAIMED</td><td>release</td><td>fence matches</td>
 *       <td>CLAIMED, leaseExpiry = now, claim token cleared</td><td>—</td>
 *       <td>+1 (from MAX_FENCE: 1)</td></tr>
 *   <tr><td>CLAIMED</td><td>complete / release / extend</td><td>fence stale</td><td>unchanged</td>
 *       <td>false / — / false</td><td>same</td></tr>
 *   <tr><td>DONE</td><td>claim</td><td>now &lt; expiresAt</td><td>DONE</td><td>AlreadyDone</td>
 *       <td>same</td></tr>
 *   <tr><td>DONE</td><td>claim</td><td>now ≥ expiresAt</td><td>CLAIMED</td><td>Won</td>
 *       <td>+1 (from MAX_FENCE: 1)</td></tr>
 *   <tr><td>DONE</td><td>complete / release / extend</td><td>any</td><td>DONE</td>
 *       <td>true / — / false</td><td>same</td></tr>
 *   <tr><td>absent</td><td>complete / release / extend</td><td>—</td><td>absent</td>
 *       <td>false / — / false</td><td>—</td></tr>
 * </table>
 *
 * <p>Invariants: the fence only rises while a record exists (up to {@link #MAX_FENCE}, see below);
 * release never deletes (deleting would reset the fence: ABA); a record is physically removed only
 * after {@code expiresAt}; of N concurrent claims on an absent or reclaimable key exactly one wins.
 *
 * <h2>The top of the fence range</h2>
 *
 * Fences run from 1 to {@link #MAX_FENCE} (2<sup>53</sup> − 1, the largest integer every store
 * computes exactly: Redis scripts count in IEEE doubles). A reclaim or release of a record whose
 * fence is {@code MAX_FENCE} does not overflow: the new fence is 1, as after a {@link
 * LockAdmin#forget}. The key stays usable, and a holder of fence {@code MAX_FENCE} is refused like
 * any stale one, since its fence no longer matches. Counting a million claims a second, a key needs
 * 285 years to get there, so in practice only a record written by something else does.
 *
 * <h2>Reading strictly</h2>
 *
 * A stored record is readable when it has {@code state} exactly {@code CLAIMED} or {@code DONE}
 * (case and spaces matter), a {@code fence} from 1 to {@link #MAX_FENCE}, {@code leaseExpiry} and
 * {@code expiresAt} from 0 to {@link #MAX_EPOCH_MILLIS} epoch milliseconds (each an integer, where
 * the store keeps them as text: plain decimal digits), and a {@code claimToken} that is absent or 1
 * to {@value ClaimRequest#MAX_TOKEN_LENGTH} printable ASCII characters; {@link LockRecord#parse}
 * applies these rules. Every verb, and every entry of a {@link BatchLockBackend} batch, that finds
 * a record that is not readable throws {@link InvalidLockRecordException} for that key and changes
 * nothing: it never answers Won, AlreadyDone, HeldByOther, {@code true} or {@code false} for it,
 * also not once the record's {@code expiresAt} (if readable) has passed, and it never writes over
 * it. Other keys, batch-mates included, are decided as if it were not there. {@link
 * LockAdmin#inspect} shows such a record as stored and {@link LockAdmin#forget} removes it; {@link
 * LockAdmin#purgeExpired} removes it once its {@code expiresAt} is a time that has passed. A
 * backend never writes an unreadable record itself.
 *
 * <h2>Errors</h2>
 *
 * Every verb validates its key first ({@link #validateKey}), before any I/O, and throws {@link
 * IllegalArgumentException} for a bad one. A store failure (unreachable, timeout, a transaction
 * that could not commit after the backend's bounded retries) is a {@link LockBackendException}
 * carrying the cause; it is never reported as {@link ClaimResult.HeldByOther} or {@code false}. A
 * record the backend cannot read is an {@link InvalidLockRecordException} (see above).
 *
 * <p>Implementations are thread-safe: one instance serves every concurrent handler of a process.
 */
public interface LockBackend extends AutoCloseable {

  /** The key length every shipped backend supports at least, in UTF-8 bytes. */
  int MIN_SUPPORTED_KEY_BYTES = 1024;

  /**
   * The highest fence a record can have: 2<sup>53</sup> − 1 = {@value}. A reclaim or release at
   * this fence gives fence 1 (see the class documentation); a stored fence above it is unreadable.
   */
  long MAX_FENCE = (1L << 53) - 1;

  /**
   * The latest time a stored record can name, in epoch milliseconds: 2<sup>53</sup> − 1 = {@value}
   * (in the year 287,396). A stored time after it, or before the epoch, is unreadable.
   */
  long MAX_EPOCH_MILLIS = (1L << 53) - 1;

  /**
   * Claims the key: creates the record, reclaims a lapsed one, re-affirms the caller's own claim
   * (same claim token), or reports who has it.
   *
   * @return Won, AlreadyDone or HeldByOther, decided atomically in the store
   * @throws IllegalArgumentException if the key is invalid for this backend (before any I/O)
   * @throws InvalidLockRecordException if the key's record is unreadable; nothing was written
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
   * @throws InvalidLockRecordException if the key's record is unreadable; nothing was written
   * @throws LockBackendException if the store failed; the outcome is then unknown
   */
  boolean complete(Claim claim, Duration ttl);

  /**
   * {@link #complete} without waiting for the store's answer: sends it and returns a stage that
   * completes with what {@code complete} would return, or exceptionally with what it would throw (a
   * {@link LockBackendException}, an {@link InvalidLockRecordException}, an {@link
   * IllegalArgumentException} for a bad key or ttl). The guard uses it so that the caller's thread
   * need not park while DONE is on its way.
   *
   * <p>The stage may complete on the store client's own I/O thread, so whoever depends on it must
   * not block there. An implementation must bound the wait as {@code complete} does (its command or
   * socket timeout), so the stage always completes. The default calls {@code complete} on the
   * calling thread and returns a stage already complete; a backend whose client is asynchronous
   * (Redis) overrides it.
   */
  default CompletionStage<Boolean> completeAsync(Claim claim, Duration ttl) {
    try {
      return CompletableFuture.completedFuture(complete(claim, ttl));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * Gives the key up: sets the lease to now and raises the fence, so the key is reclaimable at once
   * and this claim can never complete (from {@link #MAX_FENCE} the fence goes to 1). No-op if the
   * fence is stale, the record is DONE, or absent. Never deletes.
   *
   * @throws InvalidLockRecordException if the key's record is unreadable; nothing was written
   * @throws LockBackendException if the store failed
   */
  void release(Claim claim);

  /**
   * Renews the lease to {@code now + lease} (and the CLAIMED record's retention with it) if the
   * claim's fence still matches and the record is CLAIMED.
   *
   * @return true if renewed; false if the fence is stale, or the record is DONE or absent
   * @throws InvalidLockRecordException if the key's record is unreadable; nothing was written
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
