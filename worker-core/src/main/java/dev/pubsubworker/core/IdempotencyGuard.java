package dev.pubsubworker.core;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * Runs work under an idempotency claim on a {@link LockBackend}: {@link #lock} runs it at most once
 * per key, {@link #mutex} runs every call for a key one at a time.
 *
 * <pre>{@code
 * IdempotencyGuard guard = IdempotencyGuard.newBuilder(backend).build();
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
 *       safe). A bad key is an {@link IllegalArgumentException} before any I/O. A key whose record
 *       the backend cannot read is an {@link InvalidLockRecordException}, at once (not retried):
 *       the work does not run, and the key stays so until an operator forgets its record.
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
 * <h2>Group commit</h2>
 *
 * On a {@link BatchLockBackend}, concurrent claims (and the completes of {@code lock}) share round
 * trips: a caller that finds fewer calls of that verb in flight than the guard's limit sends its
 * own at once through the single verb, so a lone call pays no added latency; callers beyond that
 * queue, and when a call ends the next of them sends the queue as one batch (up to {@link
 * BatchLockBackend#maxBatchSize()} entries, distinct keys). The limit starts at {@link
 * BatchLockBackend#maxConcurrentBatches()} and adapts, up to {@link
 * BatchLockBackend#maxConcurrentCalls()}, to what the guard measures while callers queue:
 * round-trip times and how many calls its batches hold propose a step (more in flight while more do
 * not lengthen round trips, or while queued callers seldom share a batch; fewer while the store is
 * the bottleneck and a batch saves it work), and the throughput measured at each limit decides: the
 * limit steps towards one that lately got clearly more calls through per second, and does not take
 * a step to one that got clearly fewer. Each entry keeps the single verb's semantics and the claim
 * retry above. A batch the store refuses as a whole ({@link StoreRefusedException}: it is up, and
 * may have refused the statement for one entry, a table constraint or a value it cannot take) is
 * sent again entry by entry, each on its own caller's thread at once, so one key never fails its
 * batch-mates; a round trip that fails as a whole for any other reason (unreachable, a timeout)
 * fails every entry as the single verb would, without a second wait. A complete sent by {@link
 * #lockAsync} that has to queue does not wait either: its caller returns, and its batch goes with
 * the next slot (sent by the thread that ended a flush, or by the guard's flusher thread). {@link
 * Builder#batching} turns it on or off.
 *
 * <p>Thread-safe. One guard may serve a whole process, or several guards (e.g. one per
 * subscription, each with its own listener) may share one backend and one heartbeat scheduler (see
 * {@link Builder#heartbeatScheduler}). {@link #close()} stops the heartbeat scheduler the guard
 * created (not one passed in, and not the backend).
 */
public final class IdempotencyGuard implements AutoCloseable {

  /** Default lease: 30 seconds. */
  public static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);

  /**
   * Default duplicate-suppression window: 24 hours. Also the retention a {@link ClaimRequest} made
   * with {@link ClaimRequest#of} gets.
   */
  public static final Duration DEFAULT_TTL = Duration.ofHours(24);

  /** Default number of claim retries after a store failure: 2. */
  public static final int DEFAULT_CLAIM_RETRIES = 2;

  /** Default wait before the first claim retry (doubling after): 100 ms. */
  public static final Duration DEFAULT_CLAIM_RETRY_BACKOFF = Duration.ofMillis(100);

  /**
   * The longest wait between two claim retries, whatever {@link Builder#claimRetryBackoff} and
   * {@link Builder#claimRetries}: 10 s. With the defaults (2 retries from 100 ms) a claim waits at
   * most 0.3 s in all before its failure propagates; at the builder's limits (10 retries from 10 s)
   * at most 100 s; 10 retries from the default 100 ms wait at most 42.7 s (0.1 + 0.2 + … + 6.4,
   * then 10 s three times). The time of the claim calls themselves comes on top.
   */
  public static final Duration CLAIM_RETRY_BACKOFF_CAP = Duration.ofSeconds(10);

  private final LockBackend backend;
  private final CallOptions defaults;
  private final Clock clock;
  private final ScheduledExecutorService scheduler;
  private final boolean ownsScheduler;
  private final ClaimAttempts claims;
  private final ClaimSettlement settlement;
  private final ClaimedRun run;
  private final boolean batching;
  private final UnaryOperator<String> keyLogFormat;

  private IdempotencyGuard(Builder b) {
    this.backend = b.backend;
    this.keyLogFormat = b.keyLogFormat;
    this.defaults = b.defaults;
    this.clock = b.clock;
    ScheduledExecutorService given = b.scheduler;
    this.ownsScheduler = given == null;
    this.scheduler = given != null ? given : LeaseKeeper.newHeartbeatScheduler();
    GuardEvents events = new GuardEvents(b.listeners);
    boolean batching =
        backend instanceof BatchLockBackend batch
            && (b.batching != null ? b.batching : batch.batchingByDefault());
    Function<BatchLockBackend.CompleteRequest, Boolean> completeVerb;
    Function<BatchLockBackend.CompleteRequest, CompletionStage<Boolean>> completeAsyncVerb;
    if (batching) {
      BatchLockBackend batch = (BatchLockBackend) backend;
      Coalescer<BatchLockBackend.CompleteRequest, Boolean> completes =
          new Coalescer<>(
              new Coalescer.Verbs<>() {
                @Override
                public Boolean single(BatchLockBackend.CompleteRequest r) {
                  return batch.complete(r.claim(), r.ttl());
                }

                @Override
                public CompletionStage<Boolean> singleAsync(BatchLockBackend.CompleteRequest r) {
                  return batch.completeAsync(r.claim(), r.ttl());
                }

                @Override
                public List<BatchLockBackend.BatchResult<Boolean>> batch(
                    List<BatchLockBackend.CompleteRequest> rs) {
                  return batch.completeAll(rs);
                }

                @Override
                public String key(BatchLockBackend.CompleteRequest r) {
                  return r.claim().key();
                }
              },
              batch.maxBatchSize(),
              batch.maxConcurrentBatches(),
              Math.max(batch.maxConcurrentBatches(), batch.maxConcurrentCalls()),
              false,
              (r, done) -> {},
              GuardListener.Verb.COMPLETE,
              events);
      completeVerb = completes::submit;
      completeAsyncVerb = completes::submitAsync;
    } else {
      completeVerb = r -> backend.complete(r.claim(), r.ttl());
      completeAsyncVerb = r -> backend.completeAsync(r.claim(), r.ttl());
    }
    this.settlement =
        new ClaimSettlement(backend, completeVerb, completeAsyncVerb, events, b.keyLogFormat);
    Function<ClaimRequest, ClaimResult> claimVerb;
    if (batching) {
      BatchLockBackend batch = (BatchLockBackend) backend;
      Coalescer<ClaimRequest, ClaimResult> claimer =
          new Coalescer<>(
              new Coalescer.Verbs<>() {
                @Override
                public ClaimResult single(ClaimRequest r) {
                  return batch.claim(r);
                }

                @Override
                public List<BatchLockBackend.BatchResult<ClaimResult>> batch(
                    List<ClaimRequest> rs) {
                  return batch.claimAll(rs);
                }

                @Override
                public String key(ClaimRequest r) {
                  return r.key();
                }
              },
              batch.maxBatchSize(),
              batch.maxConcurrentBatches(),
              Math.max(batch.maxConcurrentBatches(), batch.maxConcurrentCalls()),
              true,
              (r, result) -> {
                if (result instanceof ClaimResult.Won won) {
                  settlement.releaseAbandoned(won.claim());
                }
              },
              GuardListener.Verb.CLAIM,
              events);
      claimVerb = claimer::submit;
    } else {
      claimVerb = backend::claim;
    }
    this.batching = batching;
    this.claims =
        new ClaimAttempts(
            claimVerb,
            events,
            b.claimRetries,
            claimRetryBackoff(b.claimRetryBackoff),
            b.keyLogFormat);
    this.run = new ClaimedRun(backend, clock, scheduler, events, settlement, b.keyLogFormat);
  }

  /**
   * The claim retry's backoff: from {@code initial}, doubling, capped at {@link
   * #CLAIM_RETRY_BACKOFF_CAP}, without jitter (each wait is exactly its ceiling).
   */
  static Backoff claimRetryBackoff(Duration initial) {
    return Backoff.exponential(initial, CLAIM_RETRY_BACKOFF_CAP).withJitter(Backoff.Jitter.NONE);
  }

  /**
   * Whether this guard groups concurrent claims and completes into batches: its backend is a {@link
   * BatchLockBackend} and {@link Builder#batching} did not turn it off.
   */
  public boolean batching() {
    return batching;
  }

  /**
   * A builder for a guard on {@code backend}, with every option at its default.
   *
   * @throws NullPointerException if backend is null
   */
  public static Builder newBuilder(LockBackend backend) {
    return new Builder(backend);
  }

  /** The backend this guard claims on. */
  public LockBackend backend() {
    return backend;
  }

  /**
   * How keys appear in this guard's log lines ({@link Builder#keyLogFormat}), so that code logging
   * about the guard's keys (a dispatcher, say) renders them the same way.
   */
  public UnaryOperator<String> keyLogFormat() {
    return keyLogFormat;
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
   * @param options per-call overrides of the guard's defaults
   * @return {@link LockResult.Executed} if the work ran in this call, {@link LockResult.Duplicate}
   *     if the key was already DONE
   * @throws KeyInProgressException if another live claim holds the key (retry later)
   * @throws FingerprintMismatchException if the stored fingerprint differs and the policy is {@link
   *     FingerprintPolicy#REJECT}
   * @throws LockBackendException if the store failed before the work ran (or, in transactional
   *     mode, before the transaction committed); an {@link InvalidLockRecordException} if the key's
   *     record is unreadable (the work did not run)
   * @throws InvalidLockKeyException if the key is invalid for the backend; nothing was claimed
   * @throws IllegalArgumentException if transactional mode is asked of a backend without it
   * @throws E if the work threw; the claim was released first
   */
  public <T, E extends Exception> LockResult<T> lock(
      String key, CallOptions options, GuardedWork<T, E> work) throws E {
    LockClaim c = claimToLock(key, options, work);
    if (c.result() instanceof ClaimResult.Won won) {
      return run.lock(won.claim(), c.options(), c.sentAt(), work);
    }
    return claims.duplicateOrThrow(key, c.options(), c.result());
  }

  /** A lock call's claim: the call's options, when the claim was sent, and the store's answer. */
  private record LockClaim(CallOptions options, Instant sentAt, ClaimResult result) {}

  /** What {@code lock} and {@code lockAsync} do before the work: check, then claim. */
  private LockClaim claimToLock(String key, CallOptions options, GuardedWork<?, ?> work) {
    Objects.requireNonNull(work, "work");
    CallOptions o = resolve(options);
    validateKey(key);
    if (o.mergedTransactional()) {
      requireTransactional(backend);
    }
    Instant sentAt = clock.instant();
    return new LockClaim(o, sentAt, claims.claim(key, o));
  }

  /**
   * As {@link #lock(String, CallOptions, GuardedWork)}, but without waiting for the store to write
   * DONE: claims the key, runs {@code work} on the calling thread if the claim is won, sends the
   * complete, and returns. The calling thread is free as soon as the complete is on its way (on a
   * backend with an asynchronous client, {@link LockBackend#completeAsync}); on others the complete
   * runs on it as in {@code lock}.
   *
   * <p>Everything up to the end of the work happens on the calling thread and is thrown from this
   * call exactly as {@code lock} throws it: a duplicate is a stage already complete with {@link
   * LockResult.Duplicate}. The stage then completes with what {@code lock} would have returned —
   * {@link Completion#COMPLETED}, {@link Completion#FENCED_OUT}, or {@link
   * Completion#COMPLETE_FAILED} (logged, as in {@code lock}) — and never exceptionally but for an
   * {@link Error}. It may complete on the store client's I/O thread: what depends on it must not
   * block. It always completes: the backend bounds the complete as it bounds every call. Until it
   * has, the key is CLAIMED under this call's fence; a redelivery finds it held, as while the work
   * runs.
   *
   * @return the result once DONE is written (or the complete failed)
   * @throws KeyInProgressException if another live claim holds the key (retry later)
   * @throws FingerprintMismatchException as {@code lock}
   * @throws LockBackendException if the store failed before the work ran
   * @throws InvalidLockKeyException if the key is invalid for the backend; nothing was claimed
   * @throws IllegalArgumentException if transactional mode is asked of a backend without it
   * @throws E if the work threw; the claim was released first
   */
  public <T, E extends Exception> CompletionStage<LockResult<T>> lockAsync(
      String key, CallOptions options, GuardedWork<T, E> work) throws E {
    LockClaim c = claimToLock(key, options, work);
    if (c.result() instanceof ClaimResult.Won won) {
      return run.lockAsync(won.claim(), c.options(), c.sentAt(), work);
    }
    return CompletableFuture.completedFuture(claims.duplicateOrThrow(key, c.options(), c.result()));
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
   * DONE, so the next call for the key runs too. Mutual exclusion, not ordering. The options'
   * {@code transactional}, {@code onDuplicate} and {@code fingerprintPolicy} do not apply.
   *
   * @param options per-call overrides of the guard's defaults
   * @return what the work returned
   * @throws KeyInProgressException if another live claim holds the key, or {@code lock} completed
   *     it (DONE)
   * @throws LockBackendException if the store failed before the work ran; an {@link
   *     InvalidLockRecordException} if the key's record is unreadable (the work did not run)
   * @throws InvalidLockKeyException if the key is invalid for the backend; nothing was claimed
   * @throws E if the work threw; the claim was released first
   */
  public <T, E extends Exception> T mutex(String key, CallOptions options, GuardedWork<T, E> work)
      throws E {
    Objects.requireNonNull(work, "work");
    CallOptions o = resolve(options);
    validateKey(key);
    Instant sentAt = clock.instant();
    ClaimResult result = claims.claim(key, o);
    if (result instanceof ClaimResult.Won won) {
      return run.mutex(won.claim(), o, sentAt, work);
    }
    throw claims.refusalForMutex(key, result);
  }

  /**
   * Gives up the claim of work that is still running, from another thread: for a worker whose
   * shutdown grace ran out. This is the one way to release a claim the caller does not hold: it
   * needs no {@link Claim}, only the context the guard handed to the work. Stops the claim's
   * heartbeat, marks its lease lost (so {@link WorkContext#checkLease()} throws from now on), and
   * releases the claim in the store, which raises the fence: the key is reclaimable at once and
   * this claim can never complete. The work's thread is not interrupted; the caller decides that.
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
    if (!(context instanceof GuardWorkContext c) || !c.belongsTo(run)) {
      throw new IllegalArgumentException("abandon needs a WorkContext this guard created");
    }
    if (!c.abandon()) {
      return false;
    }
    settlement.releaseAbandoned(c.claim());
    return true;
  }

  /**
   * Stops the heartbeat scheduler if this guard created it (none was passed to {@link
   * Builder#heartbeatScheduler}). Leaves the backend and a passed-in scheduler open: their owner
   * closes them, after every guard that uses them.
   */
  @Override
  public void close() {
    if (ownsScheduler) {
      scheduler.shutdownNow();
    }
  }

  private void validateKey(String key) {
    try {
      backend.validateKey(key);
    } catch (IllegalArgumentException e) {
      throw new InvalidLockKeyException(e);
    }
  }

  private CallOptions resolve(CallOptions options) {
    return Objects.requireNonNull(options, "options").merge(defaults);
  }

  private static void requireTransactional(LockBackend backend) {
    if (!(backend instanceof TransactionalLockBackend)) {
      throw new IllegalArgumentException(
          "transactional mode needs a TransactionalLockBackend, and "
              + backend.getClass().getName()
              + " is not one");
    }
  }

  /**
   * Builds an {@link IdempotencyGuard}. Every setter validates its argument and says what was
   * wrong; defaults are stated per setter.
   */
  public static final class Builder {
    private final LockBackend backend;
    private CallOptions defaults = CallOptions.GUARD_DEFAULTS;
    private Clock clock = Clock.systemUTC();
    private @Nullable ScheduledExecutorService scheduler;
    private final List<GuardListener> listeners = new ArrayList<>();
    private int claimRetries = DEFAULT_CLAIM_RETRIES;
    private Duration claimRetryBackoff = DEFAULT_CLAIM_RETRY_BACKOFF;
    private UnaryOperator<String> keyLogFormat = UnaryOperator.identity();
    private @Nullable Boolean batching;

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
      defaults = defaults.lease(value);
      return this;
    }

    /**
     * How long a DONE key suppresses duplicates, and how long an abandoned claim's record is kept
     * past its lease. Default {@link #DEFAULT_TTL} (24 h).
     *
     * @throws IllegalArgumentException if shorter than 1 ms
     */
    public Builder ttl(Duration value) {
      defaults = defaults.ttl(value);
      return this;
    }

    /** Whether to extend leases while work runs. Default true. */
    public Builder heartbeat(boolean value) {
      defaults = defaults.heartbeat(value);
      return this;
    }

    /** Whether to interrupt the work's thread when its lease is lost. Default false. */
    public Builder interruptOnLeaseLoss(boolean value) {
      defaults = defaults.interruptOnLeaseLoss(value);
      return this;
    }

    /** What to do when a payload fingerprint differs. Default {@link FingerprintPolicy#REPORT}. */
    public Builder fingerprintPolicy(FingerprintPolicy value) {
      defaults = defaults.fingerprintPolicy(value);
      return this;
    }

    /**
     * An observation hook called with the key whenever {@code lock} skips a duplicate; if it
     * throws, the exception is logged and ignored. Default none.
     */
    public Builder onDuplicate(Consumer<String> value) {
      defaults = defaults.onDuplicate(value);
      return this;
    }

    /**
     * Whether {@code lock} runs work inside the store transaction that writes DONE. Default false.
     * Needs a {@link TransactionalLockBackend}.
     *
     * @throws IllegalArgumentException if true and the backend is not transactional
     */
    public Builder transactional(boolean value) {
      if (value) {
        requireTransactional(backend);
      }
      defaults = defaults.transactional(value);
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
     * pool of two daemon threads, stopped by {@link IdempotencyGuard#close()}.
     *
     * <p>A scheduler passed here is not shut down by the guard: whoever created it owns it. This is
     * how several guards share one heartbeat pool (e.g. one guard per subscription over one
     * backend): build each with the same scheduler, close the guards, then shut the scheduler down.
     * Each guard keeps one sweep over its live claims planned on it (not a task per call), and
     * hands it one short extension task per due claim, so a small pool serves many guards; a pool
     * with {@link java.util.concurrent.ScheduledThreadPoolExecutor#setRemoveOnCancelPolicy
     * remove-on-cancel} drops a sweep replanned earlier at once.
     */
    public Builder heartbeatScheduler(ScheduledExecutorService value) {
      this.scheduler = Objects.requireNonNull(value, "heartbeatScheduler");
      return this;
    }

    /** Adds a listener for guard events (may be called more than once). Default none. */
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
     * The wait before the first claim retry, doubled for each further one up to {@link
     * #CLAIM_RETRY_BACKOFF_CAP} (10 s), without jitter. Default {@link
     * #DEFAULT_CLAIM_RETRY_BACKOFF} (100 ms). The longest a claim can wait in all is the sum of its
     * retries' waits: 0.3 s with the defaults, 100 s at the limits (10 retries from 10 s).
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

    /**
     * Whether to group concurrent claims and completes into batches (see "Group commit" in the
     * class documentation). Has an effect only on a {@link BatchLockBackend}. Default: on when the
     * backend supports it and {@link BatchLockBackend#batchingByDefault()} says so (every shipped
     * store backend; not the in-memory one, whose verbs cost less than the hand-off).
     */
    public Builder batching(boolean value) {
      this.batching = value;
      return this;
    }

    /** Builds the guard. */
    public IdempotencyGuard build() {
      return new IdempotencyGuard(this);
    }
  }
}
