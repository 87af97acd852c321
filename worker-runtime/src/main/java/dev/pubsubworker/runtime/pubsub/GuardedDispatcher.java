package dev.pubsubworker.runtime.pubsub;

import com.google.cloud.pubsub.v1.AckResponse;
import com.google.cloud.pubsub.v1.Subscriber;
import com.google.common.hash.Hashing;
import com.google.pubsub.v1.PubsubMessage;
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
import dev.pubsubworker.runtime.config.GuardMode;
import dev.pubsubworker.runtime.config.SubscriptionConfig;
import dev.pubsubworker.runtime.observability.MdcKeys;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * Runs one subscription's deliveries: resolves each message's key, runs the handler under the
 * configured guard, and settles the delivery (SPEC §6):
 *
 * <table>
 *   <caption>Outcome to acknowledgement</caption>
 *   <tr><th>outcome</th><th>reply</th></tr>
 *   <tr><td>handler returned, or Duplicate</td><td>ack</td></tr>
 *   <tr><td>key in progress elsewhere</td><td>nack, WARN with the delivery attempt</td></tr>
 *   <tr><td>handler threw</td><td>nack, the error logged once</td></tr>
 *   <tr><td>no (valid) key</td><td>nack (fail closed), unless allow-unguarded: run, ack</td></tr>
 *   <tr><td>complete failed / fenced out after success</td><td>ack, ERROR for alerting</td></tr>
 *   <tr><td>fenced out at a transactional commit (rolled back)</td><td>ack, no alert</td></tr>
 *   <tr><td>lock store failed before the handler</td><td>nack, ERROR</td></tr>
 *   <tr><td>arrived after the worker began stopping</td><td>nack, nothing runs</td></tr>
 * </table>
 *
 * Lines that an outage or a poison message would repeat endlessly (store failures per cause class,
 * unkeyed messages, handler failures per exception class) are written once per {@link
 * #REPEAT_INTERVAL} per kind, with the count held back since; the rest go to DEBUG.
 *
 * <p>With exactly-once delivery every ack's {@link AckResponse} is logged if not SUCCESSFUL and
 * counted; the DONE record makes the resulting redelivery a duplicate. Thread-safe.
 */
final class GuardedDispatcher {

  /** The least time between two lines of one repeated kind (store failure, unkeyed, poison). */
  static final Duration REPEAT_INTERVAL = Duration.ofSeconds(10);

  private static final Logger log = LoggerFactory.getLogger(GuardedDispatcher.class);

  private final SubscriptionConfig config;
  private final MessageHandler handler;
  private final IdempotencyGuard guard;
  private final DispatchListener listener;
  private final InFlight inFlight;
  private final UnaryOperator<String> keyLogFormat;
  private final CallOptions options;
  private final RepeatLimiter repeats;

  GuardedDispatcher(
      SubscriptionConfig config,
      MessageHandler handler,
      IdempotencyGuard guard,
      DispatchListener listener,
      InFlight inFlight,
      UnaryOperator<String> keyLogFormat) {
    this(
        config,
        handler,
        guard,
        listener,
        inFlight,
        keyLogFormat,
        new RepeatLimiter(REPEAT_INTERVAL, Clock.systemUTC()));
  }

  GuardedDispatcher(
      SubscriptionConfig config,
      MessageHandler handler,
      IdempotencyGuard guard,
      DispatchListener listener,
      InFlight inFlight,
      UnaryOperator<String> keyLogFormat,
      RepeatLimiter repeats) {
    this.repeats = repeats;
    this.config = config;
    this.handler = handler;
    this.guard = guard;
    this.listener = listener;
    this.inFlight = inFlight;
    this.keyLogFormat = keyLogFormat;
    CallOptions o =
        CallOptions.defaults()
            .lease(config.lease())
            .ttl(config.ttl())
            .heartbeat(config.heartbeat())
            .interruptOnLeaseLoss(config.interruptOnLeaseLoss())
            .fingerprintPolicy(config.fingerprintMismatch());
    this.options = config.transactional() ? o.transactional(true) : o;
  }

  /**
   * Handles one delivery on the calling (handler) thread and settles it. Once the worker has begun
   * stopping, a delivery is nacked at once without running anything ({@link
   * Outcome#REFUSED_AT_SHUTDOWN}).
   */
  void dispatch(PubsubMessage pubsub, Reply reply) {
    listener.received(config.id());
    InFlight.Entry entry = new InFlight.Entry(config.id(), Thread.currentThread(), reply);
    long id = inFlight.add(entry);
    if (id == InFlight.REFUSED) {
      // Counted by InFlight and reported in one line by the stop, not one line per delivery.
      reply.nack();
      listener.settled(config.id(), Outcome.REFUSED_AT_SHUTDOWN, Duration.ZERO);
      return;
    }
    InboundMessage message = toInbound(pubsub);
    listener.inFlight(config.id(), 1);
    MDC.put(MdcKeys.SUBSCRIPTION, config.id());
    MDC.put(MdcKeys.MESSAGE_ID, message.messageId());
    MDC.put(MdcKeys.DELIVERY_ATTEMPT, Integer.toString(message.deliveryAttempt()));
    long started = System.nanoTime();
    Outcome outcome = Outcome.FAILED;
    try {
      outcome = run(message, entry);
    } catch (Error e) {
      outcome = Outcome.FAILED;
      throw e;
    } finally {
      Duration took = Duration.ofNanos(System.nanoTime() - started);
      if (entry.settle()) {
        if (outcome.acked()) {
          reply.ack();
        } else {
          reply.nack();
        }
        listener.settled(config.id(), outcome, took);
      }
      inFlight.remove(id);
      listener.inFlight(config.id(), -1);
      MDC.remove(MdcKeys.SUBSCRIPTION);
      MDC.remove(MdcKeys.MESSAGE_ID);
      MDC.remove(MdcKeys.DELIVERY_ATTEMPT);
      MDC.remove(MdcKeys.KEY);
      MDC.remove(MdcKeys.FENCE);
    }
  }

  /** Called with each exactly-once ack's response. */
  void onAckResponse(String messageId, AckResponse response) {
    listener.ackResponse(config.id(), response);
    if (response != AckResponse.SUCCESSFUL) {
      log.warn(
          "ack of message {} on subscription {} returned {}: Pub/Sub will redeliver it, and the"
              + " DONE record makes the redelivery a duplicate",
          messageId,
          config.id(),
          response);
    }
  }

  private Outcome run(InboundMessage message, InFlight.Entry entry) {
    if (config.guard() == GuardMode.NONE) {
      return runUnguarded(message, entry);
    }
    Optional<String> key =
        config.key().resolve(message.messageId(), message.attributes(), message.orderingKey());
    if (key.isEmpty()) {
      return unkeyed(message, entry, "no key: " + config.key().text() + " did not resolve");
    }
    // Stored under the subscription's namespace (SPEC §6), validated as a whole (by the guard,
    // once,
    // before any I/O): a message on one subscription cannot claim, or be suppressed by, another
    // namespace's key.
    String k = config.storedKey(key.get());
    entry.key = k;
    MDC.put(MdcKeys.KEY, keyLogFormat.apply(k));
    CallOptions callOptions =
        config.fingerprint()
            ? options.fingerprint(Hashing.sha256().hashBytes(message.dataBuffer()).toString())
            : options;
    try {
      if (config.guard() == GuardMode.MUTEX) {
        guard.mutex(k, callOptions, ctx -> invoke(message, entry, ctx));
        return Outcome.PROCESSED;
      }
      LockResult<Void> result = guard.lock(k, callOptions, ctx -> invoke(message, entry, ctx));
      if (result instanceof LockResult.Executed<Void> executed) {
        return switch (executed.completion()) {
          case COMPLETED -> Outcome.PROCESSED;
          case FENCED_OUT -> Outcome.FENCED_OUT;
          case FENCED_OUT_ROLLED_BACK -> Outcome.FENCED_OUT_ROLLED_BACK;
          case COMPLETE_FAILED -> Outcome.COMPLETE_FAILED;
        };
      }
      log.debug("duplicate of key {} skipped; acked", keyLogFormat.apply(k));
      return Outcome.DUPLICATE;
    } catch (InvalidLockKeyException e) {
      if (entry.context != null) {
        handlerFailed(message, entry, e); // thrown by the handler, not the guard's key check
        return Outcome.FAILED;
      }
      MDC.remove(MdcKeys.KEY);
      return unkeyed(message, entry, "invalid key: " + e.getMessage());
    } catch (KeyInProgressException e) {
      log.warn(
          "key {} is in progress elsewhere ({}); delivery attempt {} of message {} nacked for a"
              + " later retry",
          keyLogFormat.apply(k),
          e.reason() == KeyInProgressException.Reason.DONE
              ? "DONE, and a mutex never runs over a completed key"
              : "held until " + e.leaseExpiry().map(Instant::toString).orElse("?"),
          attempt(message),
          message.messageId());
      return Outcome.IN_PROGRESS;
    } catch (FingerprintMismatchException e) {
      log.warn(
          "message {} reuses key {} for a different payload; rejected and nacked (attempt {})",
          message.messageId(),
          keyLogFormat.apply(k),
          attempt(message));
      return Outcome.FINGERPRINT_REJECTED;
    } catch (LockBackendException e) {
      storeFailed(message, e);
      return Outcome.STORE_FAILED;
    } catch (Exception e) {
      handlerFailed(message, entry, e);
      return Outcome.FAILED;
    }
  }

  private Void invoke(InboundMessage message, InFlight.Entry entry, WorkContext ctx)
      throws Exception {
    // Publish the context before checking for an abandonment: the stop settles first and reads the
    // context after, so one of the two always sees the other.
    entry.context = ctx;
    if (entry.settled.get()) {
      throw new InterruptedException("abandoned at shutdown before the handler started");
    }
    entry.fence = ctx.fencingToken();
    MDC.put(MdcKeys.FENCE, Long.toString(ctx.fencingToken()));
    handler.handle(message, new GuardedContext(config.id(), ctx));
    return null;
  }

  /**
   * One ERROR line per failure kind (the cause's class) per {@link #REPEAT_INTERVAL}, with its
   * stack trace and the count of failures held back since; the others at DEBUG.
   */
  private void storeFailed(InboundMessage message, LockBackendException e) {
    Throwable cause = e.getCause() == null ? e : e.getCause();
    RepeatLimiter.Decision d = repeats.check("store-failed:" + cause.getClass().getName());
    if (d.write()) {
      log.error(
          "lock store failed for message {} (attempt {}); nacked: {}{}",
          message.messageId(),
          attempt(message),
          e.getMessage(),
          d.suppressedNote(),
          e);
    } else if (log.isDebugEnabled()) {
      log.debug(
          "lock store failed for message {} (attempt {}); nacked: {}",
          message.messageId(),
          attempt(message),
          e.getMessage(),
          e);
    }
  }

  private Outcome unkeyed(InboundMessage message, InFlight.Entry entry, String why) {
    if (config.allowUnguarded()) {
      log.debug("message {} has {}; running unguarded (allow-unguarded)", message.messageId(), why);
      return runUnguarded(message, entry);
    }
    // Without a dead-letter policy such a message comes back forever: one WARN per interval.
    RepeatLimiter.Decision d = repeats.check("unkeyed");
    if (d.write()) {
      log.warn(
          "message {} has {}; nacked without running the handler (fail closed; set"
              + " allow-unguarded = true to run such messages unguarded), attempt {}{}",
          message.messageId(),
          why,
          attempt(message),
          d.suppressedNote());
    } else {
      log.debug(
          "message {} has {}; nacked without running the handler, attempt {}",
          message.messageId(),
          why,
          attempt(message));
    }
    return Outcome.UNKEYED;
  }

  private Outcome runUnguarded(InboundMessage message, InFlight.Entry entry) {
    try {
      handler.handle(message, new UnguardedContext(config.id()));
      return Outcome.UNGUARDED;
    } catch (Exception e) {
      handlerFailed(message, entry, e);
      return Outcome.FAILED;
    }
  }

  private void handlerFailed(InboundMessage message, InFlight.Entry entry, Exception e) {
    if (entry.settled.get()) {
      // Abandoned at shutdown: already released and nacked; the interrupt is why it stopped.
      log.info(
          "handler {} on message {} stopped after being abandoned at shutdown: {}",
          config.handler(),
          message.messageId(),
          e.toString());
      return;
    }
    // A poison message without a dead-letter policy fails forever: one ERROR with the stack trace
    // per exception class per interval, the rest at DEBUG.
    RepeatLimiter.Decision d = repeats.check("handler-failed:" + e.getClass().getName());
    if (d.write()) {
      log.error(
          "handler {} failed on message {} (attempt {}); nacked for redelivery{}",
          config.handler(),
          message.messageId(),
          attempt(message),
          d.suppressedNote(),
          e);
    } else if (log.isDebugEnabled()) {
      log.debug(
          "handler {} failed on message {} (attempt {}); nacked for redelivery",
          config.handler(),
          message.messageId(),
          attempt(message),
          e);
    }
  }

  private static String attempt(InboundMessage message) {
    return message.deliveryAttempt() == 0
        ? "unknown (no dead-letter policy)"
        : Integer.toString(message.deliveryAttempt());
  }

  private static InboundMessage toInbound(PubsubMessage m) {
    Integer attempt = Subscriber.getDeliveryAttempt(m);
    // No copy: a read-only view of the message's immutable bytes and attribute map.
    return new InboundMessage(
        m.getMessageId(),
        m.getData().asReadOnlyByteBuffer(),
        m.getAttributesMap(),
        m.getOrderingKey(),
        Instant.ofEpochSecond(m.getPublishTime().getSeconds(), m.getPublishTime().getNanos()),
        attempt == null ? 0 : attempt);
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
