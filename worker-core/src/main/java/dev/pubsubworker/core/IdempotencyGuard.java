package dev.pubsubworker.core;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs work under an idempotency claim on a {@link LockBackend}: {@link #lock} runs it at most once
 * per key, {@link #mutex} runs every call for a key one at a time.
 *
 * <pre>{@code
 * IdempotencyGuard guard = IdempotencyGuard.builder(backend).build();
 *
 * // De-duplicate: runs once per key; a redelivery or republish returns Duplicate.
 * guard.lock("orders:" + orderId, ctx -> supplier.place(order, ctx.fencingToken()));
 *
 * // Serialize: every update runs, never two at once for one order.
 * guard.mutex("po:" + poId, ctx -> applyStatusUpdate(poId, update));
 * }</pre>
 *
 * <h2>Outcomes</h2>
 *
 * <ul>
 *   <li>{@code lock} returns {@link LockResult.Executed} (the work ran) or {@link
 *       LockResult.Duplicate} (the key was DONE; the work was skipped). Both mean "settled:
 *       acknowledge".
 *   <li>A key held by a live claim throws {@link KeyInProgressException}: "retry later". It is an
 *       exception, not a third result, so that a caller who ignores the result cannot acknowledge a
 *       delivery whose work never ran. {@code mutex} throws it as well on a DONE key.
 *   <li>The work's own exception propagates unchanged, after the claim is released so a retry can
 *       run at once.
 *   <li>A store failure before the work runs propagates as {@link LockBackendException} (after up
 *       to {@link Builder#claimRetries} retries of the claim with the same claim token, which are
 *       safe). A bad key is an {@link IllegalArgumentException} before any I/O.
 * </ul>
 *
 * <h2>Error policy</h2>
 *
 * The guard catches only where re-raising would be worse than the error: when {@code complete}
 * fails or is fenced out after the work succeeded, it logs at ERROR and reports success ({@link
 * Completion#COMPLETE_FAILED}, {@link Completion#FENCED_OUT}), because a retry would repeat a side
 * effect; when an observation hook or listener throws, it logs and continues.
 *
 * <h2>Leases</h2>
 *
 * While the work runs, a heartbeat on a shared scheduler extends the lease every lease/3, so a
 * short lease (default 30 s) gives fast takeover after a crash while long work stays protected. If
 * an extension finds the fence stale, or the store cannot be reached until the lease runs out, the
 * {@link WorkContext} reports the lease lost (and the work's thread is interrupted if configured).
 *
 * <p>Thread-safe; one guard serves a whole process. {@link #close()} stops the heartbeat scheduler
 * the guard created (not one passed in, and not the backend).
 */
public final class IdempotencyGuard implements AutoCloseable {

  /** Default lease: 30 seconds. */
  public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);

  /** Default duplicate-suppression window: 24 hours. */
  public static final Duration DEFAULT_TTL = Duration.ofHours(24);

  /** Default number of claim retries after a store failure: 2. */
  public static final int DEFAULT_CLAIM_RETRIES = 2;

  /** Default wait before the first claim retry (doubling after): 100 ms. */
  public static final Duration DEFAULT_CLAIM_RETRY_BACKOFF = Duration.ofMillis(100);

  private static final Logger log = LoggerFactory.getLogger(IdempotencyGuard.class);

  private final LockBackend backend;
  private final Settings defaults;
  private final Clock clock;
  private final ScheduledExecutorService scheduler;
  private final boolean ownsScheduler;
  private final GuardEvents events;
  private final int claimRetries;
  private final Duration claimRetryBackoff;
  private final UnaryOperator<String> keyLogFormat;

  private IdempotencyGuard(Builder b) {
    this.backend = b.backend;
    this.defaults =
        new Settings(
            b.lease,
            b.ttl,
            b.heartbeat,
            b.interruptOnLeaseLoss,
            null,
            b.fingerprintPolicy,
            b.onDuplicate,
            b.transactional);
    this.clock = b.clock;
    this.ownsScheduler = b.scheduler == null;
    this.scheduler = ownsScheduler ? newHeartbeatScheduler() : b.scheduler;
    this.events = new GuardEvents(b.listeners);
    this.claimRetries = b.claimRetries;
    this.claimRetryBackoff = b.claimRetryBackoff;
    this.keyLogFormat = b.keyLogFormat;
  }

  /**
   * A builder for a guard on {@code backend}.
   *
   * @throws NullPointerException if backend is null
   */
  public static Builder builder(LockBackend backend) {
    return new Builder(backend);
  }

  /** The backend this guard claims on. */
  public LockBackend backend() {
    return backend;
  }

  /**
   * De-duplicates: runs {@code work} at most once per key with the guard's defaults. See {@link
   * #lock(String, CallOptions, GuardedWork)}.
   */
  public <T, E extends Exception> LockResult<T> lock(String key, GuardedWork<T, E> work) throws E {
    return lock(key, CallOptions.defaults(), work);
  }

  /**
   * De-duplicates: claims the key; if won, runs {@code work} and marks the key DONE for the ttl.
   *
   * @return {@link LockResult.Executed} if the work ran in this call, {@link LockResult.Duplicate}
   *     if the key was already DONE
   * @throws KeyInProgressException if another live claim holds the key (retry later)
   * @throws FingerprintMismatchException if the stored fingerprint differs and the policy is {@link
   *     FingerprintPolicy#REJECT}
   * @throws LockBackendException if the store failed before the work ran (or, in transactional
   *     mode, before the transaction committed)
   * @throws IllegalArgumentException if the key is invalid for the backend, or transactional mode
   *     is asked of a backend without it; nothing was claimed
   * @throws E if the work threw; the claim was released first
   */
  public <T, E extends Exception> LockResult<T> lock(
      String key, CallOptions options, GuardedWork<T, E> work) throws E {
    Objects.requireNonNull(work, "work");
    Settings s = resolve(options);
    backend.validateKey(key);
    if (s.transactional() && !(backend instanceof TransactionalLockBackend)) {
      throw new IllegalArgumentException(
          "transactional mode needs a TransactionalLockBackend, and "
              + backend.getClass().getName()
              + " is not one");
    }
    Instant sentAt = clock.instant();
    ClaimResult result = claim(key, s);
    if (result instanceof ClaimResult.AlreadyDone done) {
      checkFingerprint(key, s, done.fingerprint());
      log.debug("key {} is DONE; skipping the work as a duplicate", keyLogFormat.apply(key));
      events.duplicate(key);
      if (s.onDuplicate() != null) {
        try {
          s.onDuplicate().accept(key);
        } catch (RuntimeException e) {
          log.warn("onDuplicate hook threw for key {}; ignored", keyLogFormat.apply(key), e);
        }
      }
      return new LockResult.Duplicate<>(key);
    }
    if (result instanceof ClaimResult.HeldByOther held) {
      checkFingerprint(key, s, held.fingerprint());
      events.contended(key, held.leaseExpiry());
      throw new KeyInProgressException(
          key, KeyInProgressException.Reason.HELD_BY_OTHER, held.leaseExpiry());
    }
    Claim claim = ((ClaimResult.Won) result).claim();
    return runLocked(claim, s, sentAt, work);
  }

  /**
   * Serializes: runs {@code work} with the guard's defaults, never concurrently with another call
   * for the same key. See {@link #mutex(String, CallOptions, GuardedWork)}.
   */
  public <T, E extends Exception> T mutex(String key, GuardedWork<T, E> work) throws E {
    return mutex(key, CallOptions.defaults(), work);
  }

  /**
   * Serializes: claims the key, runs {@code work}, and always releases; it never marks the key
   * DONE, so the next call for the key runs too. Mutual exclusion, not ordering.
   *
   * @return what the work returned
   * @throws KeyInProgressException if another live claim holds the key, or {@code lock} completed
   *     it (DONE)
   * @throws LockBackendException if the store failed before the work ran
   * @throws IllegalArgumentException if the key is invalid for the backend; nothing was claimed
   * @throws E if the work threw; the claim was released first
   */
  public <T, E extends Exception> T mutex(String key, CallOptions options, GuardedWork<T, E> work)
      throws E {
    Objects.requireNonNull(work, "work");
    Settings s = resolve(options);
    backend.validateKey(key);
    Instant sentAt = clock.instant();
    ClaimResult result = claim(key, s);
    if (result instanceof ClaimResult.AlreadyDone) {
      events.contended(key, null);
      throw new KeyInProgressException(key, KeyInProgressException.Reason.DONE, null);
    }
    if (result instanceof ClaimResult.HeldByOther held) {
      events.contended(key, held.leaseExpiry());
      throw new KeyInProgressException(
          key, KeyInProgressException.Reason.HELD_BY_OTHER, held.leaseExpiry());
    }
    Claim claim = ((ClaimResult.Won) result).claim();
    LeaseKeeper keeper = startKeeper(claim, s, sentAt);
    Context context = new Context(this, claim, keeper, clock.instant());
    T value;
    try {
      value = work.run(context);
    } catch (Throwable t) {
      keeper.finish();
      if (context.end()) {
        releaseAfterFailure(claim, t);
      }
      throw t;
    }
    keeper.finish();
    if (!context.end()) {
      // Abandoned while the work ran: already released.
      return value;
    }
    long started = System.nanoTime();
    try {
      backend.release(claim);
      events.backendCall(GuardListener.Verb.RELEASE, started, true);
      events.released(key, claim.fence(), false);
    } catch (RuntimeException e) {
      // The work ran; a retry would run it again. The key stays held until its lease lapses.
      events.backendCall(GuardListener.Verb.RELEASE, started, false);
      log.error(
          "release failed after the mutex work for key {} (fence {}) succeeded; reporting success,"
              + " the key stays held until its lease lapses",
          keyLogFormat.apply(key),
          claim.fence(),
          e);
      events.completeFailed(key, claim.fence(), e);
    }
    return value;
  }

  /**
   * Gives up the claim of work that is still running, from another thread: for a worker whose
   * shutdown grace ran out. Stops the claim's heartbeat, marks its lease lost (so {@link
   * WorkContext#checkLease()} throws from now on), and releases the claim in the store, which
   * raises the fence: the key is reclaimable at once and this claim can never complete. The work's
   * thread is not interrupted; the caller decides that.
   *
   * <p>When the abandoned work ends, the guard does not release the claim again. If the work
   * returns normally, writing DONE finds the fence stale and {@code lock} reports {@link
   * Completion#FENCED_OUT} (logged at ERROR, since the work ran after its claim was given up).
   *
   * @param context the context this guard handed to the running work (by {@code lock} or {@code
   *     mutex})
   * @return true if this call abandoned the claim; false if the work had already ended or been
   *     abandoned (nothing done: the guard settles an ended claim itself)
   * @throws IllegalArgumentException if {@code context} was not created by this guard
   * @throws LockBackendException if the release failed in the store; the claim is still marked
   *     abandoned, and the key becomes reclaimable when its lease lapses (no heartbeat extends it)
   */
  public boolean abandon(WorkContext context) {
    if (!(context instanceof Context c) || c.guard != this) {
      throw new IllegalArgumentException("abandon needs a WorkContext this guard created");
    }
    if (!c.state.compareAndSet(Context.RUNNING, Context.ABANDONED)) {
      return false;
    }
    c.keeper.abandon();
    Claim claim = c.claim;
    long started = System.nanoTime();
    try {
      backend.release(claim);
    } catch (RuntimeException e) {
      events.backendCall(GuardListener.Verb.RELEASE, started, false);
      throw e;
    }
    events.backendCall(GuardListener.Verb.RELEASE, started, true);
    events.released(claim.key(), claim.fence(), true);
    return true;
  }

  /** Stops the heartbeat scheduler if this guard created it. Leaves the backend open. */
  @Override
  public void close() {
    if (ownsScheduler) {
      scheduler.shutdownNow();
    }
  }

  private <T, E extends Exception> LockResult<T> runLocked(
      Claim claim, Settings s, Instant sentAt, GuardedWork<T, E> work) throws E {
    LeaseKeeper keeper = startKeeper(claim, s, sentAt);
    Context context = new Context(this, claim, keeper, clock.instant());
    long workStarted = System.nanoTime();
    T value;
    TransactionalLockBackend.TransactionOutcome outcome = null;
    try {
      if (s.transactional()) {
        TransactionalLockBackend.Result<T> r = runInTransaction(claim, s, context, keeper, work);
        value = r.value();
        outcome = r.outcome();
      } else {
        value = work.run(context);
      }
    } catch (Throwable t) {
      keeper.finish();
      if (context.end()) {
        releaseAfterFailure(claim, t);
      }
      throw t;
    }
    keeper.finish();
    context.end();
    Duration workTime = Duration.ofNanos(System.nanoTime() - workStarted);
    String key = claim.key();
    if (outcome == TransactionalLockBackend.TransactionOutcome.COMMITTED) {
      events.completed(key, claim.fence(), workTime);
      return new LockResult.Executed<>(value, claim.fence(), Completion.COMPLETED);
    }
    if (outcome == TransactionalLockBackend.TransactionOutcome.FENCED_OUT_ROLLED_BACK) {
      log.error(
          "fenced out at commit for key {} (fence {}): the lease lapsed and another claim took the"
              + " key; the work's transaction was rolled back and the new holder runs it",
          keyLogFormat.apply(key),
          claim.fence());
      events.fencedOutRolledBack(key, claim.fence());
      return new LockResult.Executed<>(value, claim.fence(), Completion.FENCED_OUT_ROLLED_BACK);
    }
    return complete(claim, s, value, workTime);
  }

  private <T> LockResult<T> complete(Claim claim, Settings s, T value, Duration workTime) {
    String key = claim.key();
    long started = System.nanoTime();
    boolean completed;
    try {
      completed = backend.complete(claim, s.ttl());
      events.backendCall(GuardListener.Verb.COMPLETE, started, true);
    } catch (RuntimeException e) {
      events.backendCall(GuardListener.Verb.COMPLETE, started, false);
      log.error(
          "complete failed after the work for key {} (fence {}) succeeded; reporting success so the"
              + " side effect is not repeated, but DONE may be missing and a redelivery may run the"
              + " work again once the lease lapses",
          keyLogFormat.apply(key),
          claim.fence(),
          e);
      events.completeFailed(key, claim.fence(), e);
      return new LockResult.Executed<>(value, claim.fence(), Completion.COMPLETE_FAILED);
    }
    if (!completed) {
      log.error(
          "FENCED OUT: the work for key {} (fence {}) succeeded but its lease lapsed and another"
              + " claim took the key before DONE was written; the work may run twice. Lengthen the"
              + " lease or check the heartbeat",
          keyLogFormat.apply(key),
          claim.fence());
      events.fencedOut(key, claim.fence());
      return new LockResult.Executed<>(value, claim.fence(), Completion.FENCED_OUT);
    }
    events.completed(key, claim.fence(), workTime);
    return new LockResult.Executed<>(value, claim.fence(), Completion.COMPLETED);
  }

  @SuppressWarnings("unchecked") // the body throws only what the work throws: E or unchecked
  private <T, E extends Exception> TransactionalLockBackend.Result<T> runInTransaction(
      Claim claim, Settings s, Context context, LeaseKeeper keeper, GuardedWork<T, E> work)
      throws E {
    TransactionalLockBackend tx = (TransactionalLockBackend) backend;
    try {
      return tx.runAndComplete(
          claim,
          s.ttl(),
          resource -> {
            context.resource = resource;
            try {
              return work.run(context);
            } finally {
              context.resource = null;
              // Stop extending before DONE is written in this transaction.
              keeper.finish();
            }
          });
    } catch (RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw (E) e;
    }
  }

  private ClaimResult claim(String key, Settings s) {
    ClaimRequest request =
        new ClaimRequest(key, s.lease(), s.ttl(), UUID.randomUUID().toString(), s.fingerprint());
    for (int attempt = 0; ; attempt++) {
      long started = System.nanoTime();
      try {
        ClaimResult result = backend.claim(request);
        events.backendCall(GuardListener.Verb.CLAIM, started, true);
        if (result instanceof ClaimResult.Won won) {
          events.claimed(key, won.claim().fence(), won.claim().fence() > 1);
        }
        return result;
      } catch (LockBackendException e) {
        events.backendCall(GuardListener.Verb.CLAIM, started, false);
        if (attempt >= claimRetries) {
          throw e;
        }
        // The claim may have been written and its response lost: retrying with the same claim
        // token re-affirms it instead of locking ourselves out until the lease lapses.
        log.debug("claim failed for key {}; retrying with the same token", keyLogFormat.apply(key));
        try {
          Thread.sleep(claimRetryBackoff.toMillis() << Math.min(attempt, 10));
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          e.addSuppressed(interrupted);
          throw e;
        }
      }
    }
  }

  private void checkFingerprint(String key, Settings s, String stored) {
    if (s.fingerprint() == null || stored == null || s.fingerprint().equals(stored)) {
      return;
    }
    log.warn(
        "payload fingerprint for key {} differs from the stored one: the key is reused for a"
            + " different payload (a key collision or a producer bug), not a duplicate",
        keyLogFormat.apply(key));
    events.fingerprintMismatch(key);
    if (s.fingerprintPolicy() == FingerprintPolicy.REJECT) {
      throw new FingerprintMismatchException(key);
    }
  }

  private LeaseKeeper startKeeper(Claim claim, Settings s, Instant sentAt) {
    LeaseKeeper keeper =
        new LeaseKeeper(
            backend,
            claim,
            s.lease(),
            sentAt,
            clock,
            scheduler,
            s.heartbeat(),
            s.interruptOnLeaseLoss(),
            events,
            keyLogFormat.apply(claim.key()));
    keeper.start();
    return keeper;
  }

  private void releaseAfterFailure(Claim claim, Throwable failure) {
    long started = System.nanoTime();
    try {
      backend.release(claim);
      events.backendCall(GuardListener.Verb.RELEASE, started, true);
      events.released(claim.key(), claim.fence(), true);
    } catch (RuntimeException e) {
      // The work's failure is what the caller must see; the lease will lapse on its own.
      events.backendCall(GuardListener.Verb.RELEASE, started, false);
      failure.addSuppressed(e);
      log.warn(
          "release after a failed work for key {} (fence {}) failed; the key is reclaimable once"
              + " its lease lapses",
          keyLogFormat.apply(claim.key()),
          claim.fence(),
          e);
    }
  }

  private Settings resolve(CallOptions o) {
    Objects.requireNonNull(o, "options");
    Settings d = defaults;
    return new Settings(
        o.lease != null ? o.lease : d.lease(),
        o.ttl != null ? o.ttl : d.ttl(),
        o.heartbeat != null ? o.heartbeat : d.heartbeat(),
        o.interruptOnLeaseLoss != null ? o.interruptOnLeaseLoss : d.interruptOnLeaseLoss(),
        o.fingerprint,
        o.fingerprintPolicy != null ? o.fingerprintPolicy : d.fingerprintPolicy(),
        o.onDuplicate != null ? o.onDuplicate : d.onDuplicate(),
        o.transactional != null ? o.transactional : d.transactional());
  }

  private static ScheduledExecutorService newHeartbeatScheduler() {
    AtomicInteger n = new AtomicInteger();
    ThreadFactory threads =
        r -> {
          Thread t = new Thread(r, "pubsub-worker-heartbeat-" + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        };
    ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(2, threads);
    executor.setRemoveOnCancelPolicy(true);
    return executor;
  }

  private record Settings(
      Duration lease,
      Duration ttl,
      boolean heartbeat,
      boolean interruptOnLeaseLoss,
      String fingerprint,
      FingerprintPolicy fingerprintPolicy,
      Consumer<String> onDuplicate,
      boolean transactional) {}

  /** The context handed to work; valid while it runs. */
  private static final class Context implements WorkContext {
    private final IdempotencyGuard guard;
    private final Claim claim;
    private final LeaseKeeper keeper;
    private final Instant claimedAt;
    static final int RUNNING = 0;
    static final int ENDED = 1;
    static final int ABANDONED = 2;

    /** RUNNING until the work ends (ENDED) or {@link #abandon} gives the claim up (ABANDONED). */
    final AtomicInteger state = new AtomicInteger(RUNNING);

    volatile Object resource;

    Context(IdempotencyGuard guard, Claim claim, LeaseKeeper keeper, Instant claimedAt) {
      this.guard = guard;
      this.claim = claim;
      this.keeper = keeper;
      this.claimedAt = claimedAt;
    }

    /** Marks the work ended; false if it was abandoned first (its claim is already released). */
    boolean end() {
      return state.compareAndSet(RUNNING, ENDED);
    }

    @Override
    public String key() {
      return claim.key();
    }

    @Override
    public long fencingToken() {
      return claim.fence();
    }

    @Override
    public boolean isLeaseLost() {
      return keeper.isLost();
    }

    @Override
    public Instant leaseExpiry() {
      return keeper.leaseExpiry();
    }

    @Override
    public void checkLease() {
      if (keeper.isLost()) {
        throw new LeaseLostException(claim.key(), claim.fence());
      }
    }

    @Override
    public boolean isReclaim() {
      return claim.fence() > 1;
    }

    @Override
    public Instant claimedAt() {
      return claimedAt;
    }

    @Override
    public <R> Optional<R> resource(Class<R> type) {
      Object r = resource;
      return type.isInstance(r) ? Optional.of(type.cast(r)) : Optional.empty();
    }
  }

  /**
   * Builds an {@link IdempotencyGuard}. Every setter validates its argument and says what was
   * wrong; defaults are stated per setter.
   */
  public static final class Builder {
    private final LockBackend backend;
    private Duration lease = DEFAULT_LEASE;
    private Duration ttl = DEFAULT_TTL;
    private boolean heartbeat = true;
    private boolean interruptOnLeaseLoss;
    private FingerprintPolicy fingerprintPolicy = FingerprintPolicy.REPORT;
    private Consumer<String> onDuplicate;
    private boolean transactional;
    private Clock clock = Clock.systemUTC();
    private ScheduledExecutorService scheduler;
    private final List<GuardListener> listeners = new ArrayList<>();
    private int claimRetries = DEFAULT_CLAIM_RETRIES;
    private Duration claimRetryBackoff = DEFAULT_CLAIM_RETRY_BACKOFF;
    private UnaryOperator<String> keyLogFormat = UnaryOperator.identity();

    private Builder(LockBackend backend) {
      this.backend = Objects.requireNonNull(backend, "backend");
    }

    /**
     * How long a claim protects its key without an extension; the heartbeat extends it every
     * lease/3. Default {@link #DEFAULT_LEASE} (30 s).
     *
     * @throws IllegalArgumentException if shorter than 1 ms
     */
    public Builder lease(Duration value) {
      DurationChecks.requireAtLeastOneMilli("lease", value);
      this.lease = value;
      return this;
    }

    /**
     * How long a DONE key suppresses duplicates, and how long an abandoned claim's record is kept
     * past its lease. Default {@link #DEFAULT_TTL} (24 h).
     *
     * @throws IllegalArgumentException if shorter than 1 ms
     */
    public Builder ttl(Duration value) {
      DurationChecks.requireAtLeastOneMilli("ttl", value);
      this.ttl = value;
      return this;
    }

    /** Whether to extend leases while work runs. Default true. */
    public Builder heartbeat(boolean value) {
      this.heartbeat = value;
      return this;
    }

    /** Whether to interrupt the work's thread when its lease is lost. Default false. */
    public Builder interruptOnLeaseLoss(boolean value) {
      this.interruptOnLeaseLoss = value;
      return this;
    }

    /** What to do when a payload fingerprint differs. Default {@link FingerprintPolicy#REPORT}. */
    public Builder fingerprintPolicy(FingerprintPolicy value) {
      this.fingerprintPolicy = Objects.requireNonNull(value, "fingerprintPolicy");
      return this;
    }

    /**
     * An observation hook called with the key whenever {@code lock} skips a duplicate; if it
     * throws, the exception is logged and ignored. Default none.
     */
    public Builder onDuplicate(Consumer<String> value) {
      this.onDuplicate = Objects.requireNonNull(value, "onDuplicate");
      return this;
    }

    /**
     * Whether {@code lock} runs work inside the store transaction that writes DONE. Default false.
     * Needs a {@link TransactionalLockBackend}.
     *
     * @throws IllegalArgumentException if true and the backend is not transactional
     */
    public Builder transactional(boolean value) {
      if (value && !(backend instanceof TransactionalLockBackend)) {
        throw new IllegalArgumentException(
            "transactional mode needs a TransactionalLockBackend, and "
                + backend.getClass().getName()
                + " is not one");
      }
      this.transactional = value;
      return this;
    }

    /**
     * The clock that times leases locally (the backend judges expiry on its own clock). Default
     * {@link Clock#systemUTC()}.
     */
    public Builder clock(Clock value) {
      this.clock = Objects.requireNonNull(value, "clock");
      return this;
    }

    /**
     * The scheduler that runs lease extensions for every call of this guard. Default: a guard-owned
     * pool of two daemon threads, stopped by {@link IdempotencyGuard#close()}. A scheduler passed
     * here is not shut down by the guard.
     */
    public Builder heartbeatScheduler(ScheduledExecutorService value) {
      this.scheduler = Objects.requireNonNull(value, "heartbeatScheduler");
      return this;
    }

    /** Adds a listener for guard events (may be called more than once). */
    public Builder listener(GuardListener value) {
      this.listeners.add(Objects.requireNonNull(value, "listener"));
      return this;
    }

    /**
     * How many times a claim that failed in the store is retried, with the same claim token, before
     * the failure propagates. Default {@link #DEFAULT_CLAIM_RETRIES} (2).
     *
     * @throws IllegalArgumentException if negative or above 10
     */
    public Builder claimRetries(int value) {
      if (value < 0 || value > 10) {
        throw new IllegalArgumentException("claimRetries must be 0..10, but was " + value);
      }
      this.claimRetries = value;
      return this;
    }

    /**
     * The wait before the first claim retry, doubled for each further one. Default {@link
     * #DEFAULT_CLAIM_RETRY_BACKOFF} (100 ms).
     *
     * @throws IllegalArgumentException if negative or longer than 10 s
     */
    public Builder claimRetryBackoff(Duration value) {
      Objects.requireNonNull(value, "claimRetryBackoff");
      if (value.isNegative() || value.compareTo(Duration.ofSeconds(10)) > 0) {
        throw new IllegalArgumentException(
            "claimRetryBackoff must be between 0 and 10s, but was " + value);
      }
      this.claimRetryBackoff = value;
      return this;
    }

    /**
     * How keys appear in the guard's log lines, e.g. a hash when keys carry business data. Default:
     * as they are.
     */
    public Builder keyLogFormat(UnaryOperator<String> value) {
      this.keyLogFormat = Objects.requireNonNull(value, "keyLogFormat");
      return this;
    }

    /** Builds the guard. */
    public IdempotencyGuard build() {
      return new IdempotencyGuard(this);
    }
  }
}
