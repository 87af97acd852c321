package dev.pubsubworker.core;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The options of a guarded call, and the one carrier of options in the core: an {@link
 * IdempotencyGuard}'s builder holds one complete {@code CallOptions} as the guard's defaults, and
 * each call may pass overrides. Anything a call does not set falls back to the guard's value.
 *
 * <p>Immutable and thread-safe: every setter returns a copy and leaves this instance unchanged.
 *
 * <pre>{@code
 * guard.lock(key, CallOptions.defaults().lease(Duration.ofMinutes(5)).fingerprint(sha256), work);
 * }</pre>
 */
public final class CallOptions {

  private static final CallOptions NONE = new Draft().build();

  /**
   * The guard's defaults when its builder sets nothing: lease {@link
   * IdempotencyGuard#DEFAULT_LEASE}, ttl {@link IdempotencyGuard#DEFAULT_TTL}, heartbeat on, no
   * interrupt on lease loss, {@link FingerprintPolicy#REPORT}, no duplicate hook, not
   * transactional. Complete: {@link #merge} over it leaves only the fingerprint unset.
   */
  static final CallOptions GUARD_DEFAULTS =
      NONE.with(
          d -> {
            d.lease = IdempotencyGuard.DEFAULT_LEASE;
            d.ttl = IdempotencyGuard.DEFAULT_TTL;
            d.heartbeat = true;
            d.interruptOnLeaseLoss = false;
            d.fingerprintPolicy = FingerprintPolicy.REPORT;
            d.transactional = false;
          });

  // Null means "not set here": the guard's default applies. Read by the guard after merge().
  final @Nullable Duration lease;
  final @Nullable Duration ttl;
  final @Nullable Boolean heartbeat;
  final @Nullable Boolean interruptOnLeaseLoss;
  final @Nullable String fingerprint;
  final @Nullable FingerprintPolicy fingerprintPolicy;
  final @Nullable Consumer<String> onDuplicate;
  final @Nullable Boolean transactional;

  private CallOptions(Draft d) {
    this.lease = d.lease;
    this.ttl = d.ttl;
    this.heartbeat = d.heartbeat;
    this.interruptOnLeaseLoss = d.interruptOnLeaseLoss;
    this.fingerprint = d.fingerprint;
    this.fingerprintPolicy = d.fingerprintPolicy;
    this.onDuplicate = d.onDuplicate;
    this.transactional = d.transactional;
  }

  /** No overrides: every option falls back to the guard's default. */
  public static CallOptions defaults() {
    return NONE;
  }

  /**
   * How long the claim protects its key without an extension. Default: the guard's ({@link
   * IdempotencyGuard#DEFAULT_LEASE} unless its builder set another).
   *
   * @throws IllegalArgumentException if shorter than 1 ms
   * @throws NullPointerException if null
   */
  public CallOptions lease(Duration value) {
    DurationChecks.requireAtLeastOneMilli("lease", value);
    return with(d -> d.lease = value);
  }

  /**
   * How long a DONE key suppresses duplicates after completion, and how long an abandoned claim's
   * record is kept past its lease. Default: the guard's ({@link IdempotencyGuard#DEFAULT_TTL}
   * unless its builder set another).
   *
   * @throws IllegalArgumentException if shorter than 1 ms
   * @throws NullPointerException if null
   */
  public CallOptions ttl(Duration value) {
    DurationChecks.requireAtLeastOneMilli("ttl", value);
    return with(d -> d.ttl = value);
  }

  /** Whether to extend the lease every lease/3 while the work runs. Default: the guard's (on). */
  public CallOptions heartbeat(boolean value) {
    return with(d -> d.heartbeat = value);
  }

  /** Whether to interrupt the work's thread when its lease is lost. Default: the guard's (off). */
  public CallOptions interruptOnLeaseLoss(boolean value) {
    return with(d -> d.interruptOnLeaseLoss = value);
  }

  /**
   * The payload fingerprint to store with the claim and compare against the stored one (e.g. a hex
   * SHA-256 of the payload; at most {@value ClaimRequest#MAX_FINGERPRINT_LENGTH} characters,
   * checked when the claim is made). Per call only; default none (nothing compared).
   *
   * @throws NullPointerException if null
   */
  public CallOptions fingerprint(String value) {
    Objects.requireNonNull(value, "fingerprint");
    return with(d -> d.fingerprint = value);
  }

  /**
   * What to do when the fingerprints differ. Default: the guard's ({@link
   * FingerprintPolicy#REPORT}).
   *
   * @throws NullPointerException if null
   */
  public CallOptions fingerprintPolicy(FingerprintPolicy value) {
    Objects.requireNonNull(value, "fingerprintPolicy");
    return with(d -> d.fingerprintPolicy = value);
  }

  /**
   * An observation hook called with the key when {@code lock} skips a duplicate, in place of the
   * guard's. If it throws, the exception is logged and ignored. Default: the guard's (none).
   *
   * @throws NullPointerException if null
   */
  public CallOptions onDuplicate(Consumer<String> value) {
    Objects.requireNonNull(value, "onDuplicate");
    return with(d -> d.onDuplicate = value);
  }

  /**
   * Whether {@code lock} runs the work inside the store transaction that writes DONE. Requires a
   * {@link TransactionalLockBackend} ({@code lock} throws {@link IllegalArgumentException}
   * otherwise); has no effect on {@code mutex}, which never writes DONE. Default: the guard's
   * (off).
   */
  public CallOptions transactional(boolean value) {
    return with(d -> d.transactional = value);
  }

  /** These options over {@code defaults}: each option set here wins, the rest come from there. */
  CallOptions merge(CallOptions defaults) {
    return with(
        d -> {
          d.lease = lease != null ? lease : defaults.lease;
          d.ttl = ttl != null ? ttl : defaults.ttl;
          d.heartbeat = heartbeat != null ? heartbeat : defaults.heartbeat;
          d.interruptOnLeaseLoss =
              interruptOnLeaseLoss != null ? interruptOnLeaseLoss : defaults.interruptOnLeaseLoss;
          d.fingerprint = fingerprint != null ? fingerprint : defaults.fingerprint;
          d.fingerprintPolicy =
              fingerprintPolicy != null ? fingerprintPolicy : defaults.fingerprintPolicy;
          d.onDuplicate = onDuplicate != null ? onDuplicate : defaults.onDuplicate;
          d.transactional = transactional != null ? transactional : defaults.transactional;
        });
  }

  // The options the guard reads after merge() over its complete defaults: always set there.

  Duration mergedLease() {
    return merged(lease, "lease");
  }

  Duration mergedTtl() {
    return merged(ttl, "ttl");
  }

  boolean mergedHeartbeat() {
    return merged(heartbeat, "heartbeat");
  }

  boolean mergedInterruptOnLeaseLoss() {
    return merged(interruptOnLeaseLoss, "interruptOnLeaseLoss");
  }

  boolean mergedTransactional() {
    return merged(transactional, "transactional");
  }

  private static <T> T merged(@Nullable T value, String option) {
    if (value == null) {
      throw new IllegalStateException(option + " is unset: read only after merge() over defaults");
    }
    return value;
  }

  /** A copy of these options with {@code change} applied. */
  private CallOptions with(Consumer<Draft> change) {
    Draft d = new Draft();
    d.lease = lease;
    d.ttl = ttl;
    d.heartbeat = heartbeat;
    d.interruptOnLeaseLoss = interruptOnLeaseLoss;
    d.fingerprint = fingerprint;
    d.fingerprintPolicy = fingerprintPolicy;
    d.onDuplicate = onDuplicate;
    d.transactional = transactional;
    change.accept(d);
    return d.build();
  }

  /** The mutable copy that every setter goes through; never escapes this class. */
  private static final class Draft {
    @Nullable Duration lease;
    @Nullable Duration ttl;
    @Nullable Boolean heartbeat;
    @Nullable Boolean interruptOnLeaseLoss;
    @Nullable String fingerprint;
    @Nullable FingerprintPolicy fingerprintPolicy;
    @Nullable Consumer<String> onDuplicate;
    @Nullable Boolean transactional;

    CallOptions build() {
      return new CallOptions(this);
    }
  }
}
