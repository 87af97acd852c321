package dev.pubsubworker.pubsub;

import com.google.common.hash.Hashing;
import dev.pubsubworker.api.HandlerContext;
import dev.pubsubworker.api.InboundMessage;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.core.CallOptions;
import dev.pubsubworker.core.FingerprintMismatchException;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.InvalidLockKeyException;
import dev.pubsubworker.core.KeyInProgressException;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.core.LockResult;
import dev.pubsubworker.core.WorkContext;
import java.time.Instant;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One run of a delivery, on the calling thread: claim → handler → outcome (or, once the handler
 * ran, the outcome to come when the store answers the complete: {@link Result#completing}). Under
 * {@link GuardMode#LOCK} or {@link GuardMode#MUTEX} it claims the delivery's key through the guard
 * and runs the handler if the claim is won; with {@link GuardMode#NONE} (or an unkeyed message
 * allowed to) it runs the handler without a claim. What the guard or the handler reports becomes
 * the {@link Outcome}; failures go to {@link Failures}. Thread-safe.
 */
final class GuardedRun {

  /**
   * What one run came to.
   *
   * @param outcome how to settle it; {@link Outcome#IN_PROGRESS} when {@code held}; when {@code
   *     completing}, what it is settled with should that stage fail
   * @param held true if another claim holds its key and it may park (settle it later)
   * @param heldUntil the holder's lease expiry, when held and known
   * @param completing when the handler ran and its complete is still on its way: the outcome once
   *     the store answers (maybe on the store client's thread); else null
   */
  record Result(
      Outcome outcome,
      boolean held,
      @Nullable Instant heldUntil,
      @Nullable CompletionStage<Outcome> completing) {
    static Result of(Outcome outcome) {
      return new Result(outcome, false, null, null);
    }
  }

  private static final Logger log = LoggerFactory.getLogger(GuardedRun.class);

  private final String subscription;
  private final GuardMode mode;
  private final @Nullable IdempotencyGuard guard;
  private final @Nullable DeliveryKeys keys;
  private final CallOptions options;
  private final boolean fingerprint;
  private final boolean allowUnguarded;
  private final MessageHandler handler;
  private final Failures failures;
  private final UnaryOperator<String> keyLogFormat;

  GuardedRun(
      String subscription,
      GuardMode mode,
      @Nullable IdempotencyGuard guard,
      @Nullable DeliveryKeys keys,
      CallOptions options,
      boolean fingerprint,
      boolean allowUnguarded,
      MessageHandler handler,
      Failures failures,
      UnaryOperator<String> keyLogFormat) {
    this.subscription = subscription;
    this.mode = mode;
    this.guard = guard;
    this.keys = keys;
    this.options = options;
    this.fingerprint = fingerprint;
    this.allowUnguarded = allowUnguarded;
    this.handler = handler;
    this.failures = failures;
    this.keyLogFormat = keyLogFormat;
  }

  /**
   * Runs {@code d} once.
   *
   * @param mayPark whether {@code d} waits in a line, so that a key held by another claim parks it
   *     (a {@link Result#held} result) instead of nacking it
   */
  Result run(Delivery d, boolean mayPark) {
    IdempotencyGuard g = guard;
    DeliveryKeys ks = keys;
    if (mode == GuardMode.NONE || g == null || ks == null) {
      return Result.of(runUnguarded(d));
    }
    InboundMessage message = d.message();
    Optional<String> key = ks.lockKey(d);
    if (key.isEmpty()) {
      return Result.of(unkeyed(d, "no-key", "no key: " + ks.description() + " did not resolve"));
    }
    // Validated as a whole by the guard, once, before any I/O.
    String k = key.get();
    d.observer().keyResolved(k);
    DeliveryMdc.key(keyLogFormat.apply(k));
    CallOptions callOptions =
        fingerprint
            ? options.fingerprint(Hashing.sha256().hashBytes(message.dataBuffer()).toString())
            : options;
    try {
      if (mode == GuardMode.MUTEX) {
        g.mutex(k, callOptions, ctx -> invoke(d, ctx));
        return Result.of(Outcome.PROCESSED);
      }
      CompletableFuture<LockResult<Boolean>> sent =
          g.lockAsync(k, callOptions, ctx -> invoke(d, ctx)).toCompletableFuture();
      if (!sent.isDone()) {
        // The handler ran; DONE is on its way and settles the delivery when the store answers.
        return new Result(
            Outcome.COMPLETE_FAILED, false, null, sent.thenApply(r -> outcomeOf(r, k)));
      }
      return Result.of(outcomeOf(sent.join(), k));
    } catch (InvalidLockKeyException e) {
      if (d.context() != null) {
        // Thrown by the handler, not the guard's key check.
        return Result.of(failures.handlerFailed(d, e));
      }
      DeliveryMdc.clearKey();
      return Result.of(unkeyed(d, "invalid-key", "invalid key: " + e.getMessage()));
    } catch (KeyInProgressException e) {
      if (e.reason() == KeyInProgressException.Reason.HELD_BY_OTHER && mayPark) {
        return new Result(Outcome.IN_PROGRESS, true, e.leaseExpiry().orElse(null), null);
      }
      return Result.of(failures.inProgress(message, k, e));
    } catch (FingerprintMismatchException e) {
      return Result.of(failures.fingerprintRejected(message, k));
    } catch (LockBackendException e) {
      return Result.of(failures.storeFailed(message, e));
    } catch (Exception e) {
      // The guard released the claim before rethrowing, so a corrected republish can run.
      return Result.of(failures.handlerFailed(d, e));
    }
  }

  /** What a lock call's result means for its delivery. */
  private Outcome outcomeOf(LockResult<Boolean> result, String key) {
    if (result instanceof LockResult.Executed<Boolean> executed) {
      return switch (executed.completion()) {
        case COMPLETED -> Outcome.PROCESSED;
        case FENCED_OUT -> Outcome.FENCED_OUT;
        case FENCED_OUT_ROLLED_BACK -> Outcome.FENCED_OUT_ROLLED_BACK;
        case COMPLETE_FAILED -> Outcome.COMPLETE_FAILED;
      };
    }
    log.debug("duplicate of key {} skipped; acked", keyLogFormat.apply(key));
    return Outcome.DUPLICATE;
  }

  /** Unkeyed while fail closed: dead-lettered; with unguarded runs allowed: run unguarded. */
  private Outcome unkeyed(Delivery d, String errorClass, String why) {
    if (allowUnguarded) {
      log.debug(
          "message {} has {}; running unguarded (allow-unguarded)", d.message().messageId(), why);
      return runUnguarded(d);
    }
    return failures.unkeyed(d.message(), errorClass, why);
  }

  private Outcome runUnguarded(Delivery d) {
    try {
      handle(d, new UnguardedContext(subscription));
      return Outcome.UNGUARDED;
    } catch (Exception e) {
      return failures.handlerFailed(d, e);
    }
  }

  /** Runs the handler under the won claim {@code ctx}; true (a value for the guard's result). */
  private Boolean invoke(Delivery d, WorkContext ctx) throws Exception {
    // Publish the context before checking for an abandonment: the stop settles first and reads the
    // context after, so one of the two always sees the other.
    d.claimed(ctx);
    if (d.isSettled()) {
      throw new InterruptedException("abandoned at shutdown before the handler started");
    }
    d.observer().fenced(ctx.fencingToken());
    DeliveryMdc.fence(ctx.fencingToken());
    handle(d, new GuardedContext(subscription, ctx));
    return Boolean.TRUE;
  }

  /** Runs the handler inside its tracing scope. */
  private void handle(Delivery d, HandlerContext context) throws Exception {
    DeliveryObserver.Scope handling = d.observer().handlerStarted();
    try {
      handler.handle(d.message(), context);
    } catch (Exception | Error e) {
      d.observer().handlerFailed(e);
      throw e;
    } finally {
      handling.close();
    }
  }

  private record GuardedContext(String subscription, WorkContext work) implements HandlerContext {
    @Override
    public Optional<String> key() {
      return Optional.of(work.key());
    }

    @Override
    public OptionalLong fencingToken() {
      return OptionalLong.of(work.fencingToken());
    }

    @Override
    public boolean isLeaseLost() {
      return work.isLeaseLost();
    }

    @Override
    public void checkLease() {
      work.checkLease();
    }

    @Override
    public <R> Optional<R> resource(Class<R> type) {
      return work.resource(type);
    }
  }

  private record UnguardedContext(String subscription) implements HandlerContext {
    @Override
    public Optional<String> key() {
      return Optional.empty();
    }

    @Override
    public OptionalLong fencingToken() {
      return OptionalLong.empty();
    }

    @Override
    public boolean isLeaseLost() {
      return false;
    }

    @Override
    public void checkLease() {}

    @Override
    public <R> Optional<R> resource(Class<R> type) {
      return Optional.empty();
    }
  }
}
