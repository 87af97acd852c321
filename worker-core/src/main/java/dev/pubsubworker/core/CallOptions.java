package dev.pubsubworker.core;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Per-call overrides of an {@link IdempotencyGuard}'s defaults. Immutable: every method returns a
 * copy. Anything not set falls back to the guard's value.
 *
 * <pre>{@code
 * guard.lock(key, CallOptions.defaults().lease(Duration.ofMinutes(5)).fingerprint(sha256), work);
 * }</pre>
 */
public final class CallOptions {

  private static final CallOptions DEFAULTS =
      new CallOptions(null, null, null, null, null, null, null, null);

  final Duration lease;
  final Duration ttl;
  final Boolean heartbeat;
  final Boolean interruptOnLeaseLoss;
  final String fingerprint;
  final FingerprintPolicy fingerprintPolicy;
  final Consumer<String> onDuplicate;
  final Boolean transactional;

  private CallOptions(
      Duration lease,
      Duration ttl,
      Boolean heartbeat,
      Boolean interruptOnLeaseLoss,
      String fingerprint,
      FingerprintPolicy fingerprintPolicy,
      Consumer<String> onDuplicate,
      Boolean transactional) {
    this.lease = lease;
    this.ttl = ttl;
    this.heartbeat = heartbeat;
    this.interruptOnLeaseLoss = interruptOnLeaseLoss;
    this.fingerprint = fingerprint;
    this.fingerprintPolicy = fingerprintPolicy;
    this.onDuplicate = onDuplicate;
    this.transactional = transactional;
  }

  /** No overrides: the guard's defaults apply. */
  public static CallOptions defaults() {
    return DEFAULTS;
  }

  /**
   * The lease for this call.
   *
   * @throws IllegalArgumentException if shorter than 1 ms
   */
  public CallOptions lease(Duration value) {
    DurationChecks.requireAtLeastOneMilli("lease", value);
    return new CallOptions(
        value,
        ttl,
        heartbeat,
        interruptOnLeaseLoss,
        fingerprint,
        fingerprintPolicy,
        onDuplicate,
        transactional);
  }

  /**
   * The duplicate-suppression window after completion (and the retention of an abandoned claim).
   *
   * @throws IllegalArgumentException if shorter than 1 ms
   */
  public CallOptions ttl(Duration value) {
    DurationChecks.requireAtLeastOneMilli("ttl", value);
    return new CallOptions(
        lease,
        value,
        heartbeat,
        interruptOnLeaseLoss,
        fingerprint,
        fingerprintPolicy,
        onDuplicate,
        transactional);
  }

  /** Whether to extend the lease every lease/3 while the work runs. */
  public CallOptions heartbeat(boolean value) {
    return new CallOptions(
        lease,
        ttl,
        value,
        interruptOnLeaseLoss,
        fingerprint,
        fingerprintPolicy,
        onDuplicate,
        transactional);
  }

  /** Whether to interrupt the work's thread when its lease is lost. */
  public CallOptions interruptOnLeaseLoss(boolean value) {
    return new CallOptions(
        lease, ttl, heartbeat, value, fingerprint, fingerprintPolicy, onDuplicate, transactional);
  }

  /**
   * The payload fingerprint to store with the claim and compare against the stored one (e.g. a hex
   * SHA-256 of the payload; at most {@value ClaimRequest#MAX_FINGERPRINT_LENGTH} characters).
   */
  public CallOptions fingerprint(String value) {
    Objects.requireNonNull(value, "fingerprint");
    return new CallOptions(
        lease,
        ttl,
        heartbeat,
        interruptOnLeaseLoss,
        value,
        fingerprintPolicy,
        onDuplicate,
        transactional);
  }

  /** What to do when the fingerprints differ. */
  public CallOptions fingerprintPolicy(FingerprintPolicy value) {
    Objects.requireNonNull(value, "fingerprintPolicy");
    return new CallOptions(
        lease,
        ttl,
        heartbeat,
        interruptOnLeaseLoss,
        fingerprint,
        value,
        onDuplicate,
        transactional);
  }

  /**
   * An observation hook called with the key when {@code lock} skips a duplicate, instead of the
   * guard's. If it throws, the exception is logged and ignored.
   */
  public CallOptions onDuplicate(Consumer<String> value) {
    Objects.requireNonNull(value, "onDuplicate");
    return new CallOptions(
        lease,
        ttl,
        heartbeat,
        interruptOnLeaseLoss,
        fingerprint,
        fingerprintPolicy,
        value,
        transactional);
  }

  /**
   * Whether {@code lock} runs the work inside the store transaction that writes DONE. Requires a
   * {@link TransactionalLockBackend}; has no effect on {@code mutex}, which never writes DONE.
   */
  public CallOptions transactional(boolean value) {
    return new CallOptions(
        lease,
        ttl,
        heartbeat,
        interruptOnLeaseLoss,
        fingerprint,
        fingerprintPolicy,
        onDuplicate,
        value);
  }
}
