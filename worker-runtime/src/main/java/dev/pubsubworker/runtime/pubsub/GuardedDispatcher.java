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
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.DoubleSupplier;
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
 *   <tr><td>key held by another live claim</td><td>park: no reply yet, the claim retried later
 *       (see below); then ack as {@code parked-then-duplicate} or run and ack as {@code
 *       parked-then-processed}; nack ({@code parked-timeout}, WARN) only after {@code
 *       in-progress-max-wait}</td></tr>
 *   <tr><td>key already running or parked in this process</td><td>queued locally behind it (FIFO
 *       per key), then as above</td></tr>
 *   <tr><td>key held elsewhere with {@code in-progress-max-wait = 0s}, or a mutex over a DONE
 *       key</td><td>nack, WARN with the delivery attempt</td></tr>
 *   <tr><td>handler threw</td><td>nack, the error logged once</td></tr>
 *   <tr><td>handler threw a terminal exception ({@link TerminalFailures})</td>
 *       <td>published to the dead-letter topic, then ack ({@link DeadLetters})</td></tr>
 *   <tr><td>no (valid) key</td><td>dead-lettered like a terminal exception (fail closed),
 *       unless allow-unguarded: run, ack</td></tr>
 *   <tr><td>complete failed / fenced out after success</td><td>ack, ERROR for alerting</td></tr>
 *   <tr><td>fenced out at a transactional commit (rolled back)</td><td>ack, no alert</td></tr>
 *   <tr><td>lock store failed before the handler</td><td>nack, ERROR</td></tr>
 *   <tr><td>arrived after the worker began stopping, or parked / queued when it
 *       began</td><td>nack, nothing runs</td></tr>
 * </table>
 *
 * <p><b>Parking.</b> A parked delivery holds no thread: the Subscriber keeps it outstanding (it
 * extends its ack deadline and counts it against flow control), a timer retries its claim after a
 * {@link ParkBackoff} delay (never later than the holder's lease expiry plus jitter), and the retry
 * runs on one of the subscription's handler threads. Deliveries of a key this process is already
 * running or has parked wait in a FIFO line behind it, with no store call; when the head settles,
 * the next one is handed to a handler thread. Each waiting delivery has its own deadline, {@code
 * in-progress-max-wait} after it began to wait. Lines are bounded by flow control: every waiting
 * delivery is one of the subscription's outstanding messages. {@link #releaseWaiting} nacks every
 * waiting delivery when the worker begins stopping. One INFO line per parked delivery at most.
 *
 * <p>Lines that an outage or a poison message would repeat endlessly (store failures per cause
 * class, unkeyed messages, handler failures per exception class) are written once per {@link
 * #REPEAT_INTERVAL} per kind, with the count held back since; the rest go to DEBUG.
 *
 * <p>With exactly-once delivery every ack's {@link AckResponse} is logged if not SUCCESSFUL and
 * counted; the DONE record makes the resulting redelivery a duplicate. Thread-safe.
 */
final class GuardedDispatcher {

  /** The least time between two lines of one repeated kind (store failure, unkeyed, poison). */
  static final Duration REPEAT_INTERVAL = Duration.ofSeconds(10);

  private static final Logger log = LoggerFactory.getLogger(GuardedDispatcher.class);

  /**
   * What parking needs: a timer that only hands retries over, the subscription's handler threads
   * that run them, a clock for deadlines and lease expiries, and the jitter's source.
   *
   * @param timer schedules a task after a delay; returns what cancels it
   * @param handlers runs a retry or the next delivery of a line (the subscription's handler pools)
   * @param clock deadlines and lease expiries are measured on it
   * @param random numbers in [0, 1) for the backoff's jitter
   */
  record Parking(Timer timer, Executor handlers, Clock clock, DoubleSupplier random) {

    /** Schedules {@code task} after {@code delay}; the returned future cancels it. */
    @FunctionalInterface
    interface Timer {
      Future<?> schedule(Runnable task, Duration delay);
    }

    /** A timer on {@code scheduler}; retries run on {@code handlers}. */
    static Parking on(ScheduledExecutorService scheduler, Executor handlers) {
      return new Parking(
          (task, delay) -> scheduler.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS),
          handlers,
          Clock.systemUTC(),
          () -> ThreadLocalRandom.current().nextDouble());
    }
  }

  /** Where a delivery is; guarded by {@link #lines}. */
  private enum State {
    /** On a handler thread (or about to be: the first run, on the receiver's thread). */
    RUNNING,
    /** In its key's line behind the head, waiting for it to settle. */
    QUEUED,
    /** The line's head, waiting for its retry (on the timer or for a handler thread). */
    PARKED,
    /** Settled, or about to be by whoever moved it here. */
    DONE
  }

  /** One delivery across its runs and waits. */
  private static final class Delivery {
    final InboundMessage message;
    final Reply reply;
    final AtomicBoolean settled = new AtomicBoolean();

    /** The line it joined; null when it joined none (no parking, no key, stopping). */
    String line;

    /** Its stored (lock) key, once resolved and valid; what its claims and log lines use. */
    volatile String lockKey;

    /** The lease expiry of the claim that held the key at its last run, if it was held. */
    volatile Instant heldUntil;

    volatile boolean heldByOther;

    /** Follows it from receipt to settlement (tracing). */
    volatile DeliveryObserver observer = DeliveryObserver.NONE;

    // Guarded by lines:
    State state = State.RUNNING;
    long waitStartedMillis = -1;
    long deadlineMillis;
    int polls;
    boolean logged;
    boolean waiting;
    Future<?> timer;

    Delivery(InboundMessage message, Reply reply) {
      this.message = message;
      this.reply = reply;
    }

    boolean settle() {
      return settled.compareAndSet(false, true);
    }

    boolean waited() {
      return waitStartedMillis >= 0;
    }
  }

  private final SubscriptionConfig config;
  private final MessageHandler handler;
  private final IdempotencyGuard guard;
  private final DispatchListener listener;
  private final InFlight inFlight;
  private final UnaryOperator<String> keyLogFormat;
  private final CallOptions options;
  private final RepeatLimiter repeats;
  private final TerminalFailures terminal;
  private final DeadLetters deadLetters;
  private final Parking parking;
  private final boolean parks;
  private final boolean messageOrdering;

  /** Each key's line: the head (running or parked) first, then the queued deliveries. */
  private final Map<String, Deque<Delivery>> lines = new HashMap<>();

  // Guarded by lines.
  private boolean stopping;

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
    this(
        config,
        handler,
        guard,
        listener,
        inFlight,
        keyLogFormat,
        repeats,
        TerminalFailures.poisonOnly(),
        DeadLetters.none(config.id(), repeats),
        Parking.on(SharedTimer.INSTANCE, ForkJoinPool.commonPool()),
        true);
  }

  /**
   * A dispatcher whose terminal failures ({@code terminal}; a missing or invalid key when fail
   * closed) go to {@code deadLetters}, and whose deliveries of a held key wait with {@code parking}
   * (in lines per ordering key when {@code messageOrdering} is on).
   */
  GuardedDispatcher(
      SubscriptionConfig config,
      MessageHandler handler,
      IdempotencyGuard guard,
      DispatchListener listener,
      InFlight inFlight,
      UnaryOperator<String> keyLogFormat,
      RepeatLimiter repeats,
      TerminalFailures terminal,
      DeadLetters deadLetters,
      Parking parking,
      boolean messageOrdering) {
    this.repeats = repeats;
    this.terminal = terminal;
    this.deadLetters = deadLetters;
    this.config = config;
    this.handler = handler;
    this.guard = guard;
    this.listener = listener;
    this.inFlight = inFlight;
    this.keyLogFormat = keyLogFormat;
    this.parking = parking;
    this.messageOrdering = messageOrdering;
    this.parks = config.guard() != GuardMode.NONE && !config.inProgressMaxWait().isZero();
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
   * Handles one delivery on the calling (handler) thread: runs it and settles it, or parks it or
   * queues it behind its key's line and returns without settling (a timer or the line's head
   * settles it later). Once the worker has begun stopping, a delivery is nacked at once without
   * running anything ({@link Outcome#REFUSED_AT_SHUTDOWN}).
   */
  void dispatch(PubsubMessage pubsub, Reply reply) {
    listener.received(config.id());
    Delivery d = new Delivery(toInbound(pubsub), reply);
    d.observer = listener.deliveryStarted(config.id(), pubsub);
    if (parks && !lineUp(d)) {
      return; // queued behind its key's head; handed to a handler thread when its turn comes
    }
    attempt(d);
  }

  /**
   * Nacks every delivery that waits (parked or queued locally) and makes every later wait a nack:
   * they have not started, so they must not run once the worker stops (SPEC §6 "Shutdown"). Call
   * after {@link InFlight#beginStop()}.
   *
   * @return how many deliveries were nacked
   */
  int releaseWaiting() {
    List<Delivery> released = new ArrayList<>();
    synchronized (lines) {
      stopping = true;
      for (Iterator<Deque<Delivery>> it = lines.values().iterator(); it.hasNext(); ) {
        Deque<Delivery> line = it.next();
        for (Iterator<Delivery> li = line.iterator(); li.hasNext(); ) {
          Delivery d = li.next();
          if (d.state == State.QUEUED || d.state == State.PARKED) {
            leave(d);
            li.remove();
            released.add(d);
          }
        }
        if (line.isEmpty()) {
          it.remove();
        }
      }
    }
    int nacked = 0;
    for (Delivery d : released) {
      if (d.settle()) {
        d.reply.nack();
        listener.settled(config.id(), Outcome.REFUSED_AT_SHUTDOWN, Duration.ZERO);
        listener.parkedSettled(config.id(), Outcome.REFUSED_AT_SHUTDOWN, waitedSoFar(d));
        d.observer.settled(Outcome.REFUSED_AT_SHUTDOWN);
        nacked++;
      }
    }
    return nacked;
  }

  /** How many deliveries wait right now (parked or queued locally). */
  int waiting() {
    synchronized (lines) {
      int n = 0;
      for (Deque<Delivery> line : lines.values()) {
        for (Delivery d : line) {
          n += d.waiting ? 1 : 0;
        }
      }
      return n;
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

  /**
   * Puts {@code d} in its key's line.
   *
   * @return true if it heads the line (run it now), false if it was queued behind the head
   */
  private boolean lineUp(Delivery d) {
    String k = lineKey(d);
    if (k == null) {
      return true; // no valid key: run() settles it as unkeyed
    }
    synchronized (lines) {
      if (stopping) {
        return true; // InFlight refuses it
      }
      d.line = k;
      Deque<Delivery> line = lines.get(k);
      if (line == null) {
        line = new ArrayDeque<>();
        line.add(d);
        lines.put(k, line);
        return true;
      }
      line.addLast(d);
      d.state = State.QUEUED;
      startWaiting(d);
      d.timer = parking.timer().schedule(() -> queuedTimedOut(d), config.inProgressMaxWait());
    }
    log.debug(
        "message {} (key {}) queued behind an earlier delivery of its {} in this process",
        d.message.messageId(),
        keyLogFormat.apply(d.lockKey),
        k.equals(d.lockKey) ? "key" : "ordering key");
    return false;
  }

  /**
   * The line a delivery joins, or null if it has no (valid) key. With message ordering on, a
   * delivery with an ordering key lines up behind the earlier deliveries of that ordering key: the
   * client hands a key's next message to the receiver as soon as the previous call returns (its
   * {@code SequentialExecutorService}), not when it is acked, so a parked message would otherwise
   * be overtaken. Otherwise it lines up behind the deliveries of its lock key. Deliveries of one
   * lock key in different lines still never overlap: the store parks the later one.
   */
  private String lineKey(Delivery d) {
    InboundMessage message = d.message;
    Optional<String> key = storedKey(message);
    if (key.isEmpty()) {
      return null;
    }
    String k = key.get();
    try {
      guard.backend().validateKey(k);
    } catch (IllegalArgumentException e) {
      return null;
    }
    d.lockKey = k;
    if (messageOrdering && !message.orderingKey().isEmpty()) {
      // "\n" never occurs in a stored key's namespace, so the two kinds of line never meet.
      return "ordering-key\n" + message.orderingKey();
    }
    return k;
  }

  /**
   * The message's key as stored: under the subscription's namespace (SPEC §6), so a message on one
   * subscription cannot claim, or be suppressed by, another namespace's key; empty if it has none.
   */
  private Optional<String> storedKey(InboundMessage message) {
    return config
        .key()
        .resolve(message.messageId(), message.attributes(), message.orderingKey())
        .map(config::storedKey);
  }

  /** Runs {@code d} once on the calling thread; then settles it, or parks it again. */
  private void attempt(Delivery d) {
    InFlight.Entry entry =
        new InFlight.Entry(config.id(), Thread.currentThread(), d.reply, d.settled);
    entry.observer = d.observer;
    long id = inFlight.add(entry);
    if (id == InFlight.REFUSED) {
      // Counted by InFlight and reported in one line by the stop, not one line per delivery.
      settle(d, Outcome.REFUSED_AT_SHUTDOWN, Duration.ZERO);
      return;
    }
    InboundMessage message = d.message;
    listener.inFlight(config.id(), 1);
    MDC.put(MdcKeys.SUBSCRIPTION, config.id());
    MDC.put(MdcKeys.MESSAGE_ID, message.messageId());
    MDC.put(MdcKeys.DELIVERY_ATTEMPT, Integer.toString(message.deliveryAttempt()));
    long started = System.nanoTime();
    Outcome outcome = Outcome.FAILED;
    boolean parked = false;
    DeliveryObserver.Scope traced = d.observer.activate();
    try {
      d.heldByOther = false;
      outcome = run(d, entry);
      if (outcome == Outcome.IN_PROGRESS && d.heldByOther && d.line != null) {
        outcome = park(d);
        parked = outcome == null;
      }
    } catch (Error e) {
      outcome = Outcome.FAILED;
      throw e;
    } finally {
      Duration took = Duration.ofNanos(System.nanoTime() - started);
      if (!parked) {
        // Once only: a delivery abandoned at shutdown was nacked already, and just leaves its line.
        settle(d, outcome, took);
      }
      traced.close();
      inFlight.remove(id);
      listener.inFlight(config.id(), -1);
      MDC.remove(MdcKeys.SUBSCRIPTION);
      MDC.remove(MdcKeys.MESSAGE_ID);
      MDC.remove(MdcKeys.DELIVERY_ATTEMPT);
      MDC.remove(MdcKeys.KEY);
      MDC.remove(MdcKeys.FENCE);
    }
  }

  /**
   * Acks or nacks {@code d} (once: a stop may have nacked it already), reports it, and hands its
   * line to the next delivery of the key.
   */
  private void settle(Delivery d, Outcome outcome, Duration took) {
    boolean waited;
    synchronized (lines) {
      waited = d.waited();
    }
    Outcome reported = waited ? afterWaiting(outcome) : outcome;
    if (d.settle()) {
      if (reported.acked()) {
        d.reply.ack();
      } else {
        d.reply.nack();
      }
      listener.settled(config.id(), reported, took);
      if (waited) {
        listener.parkedSettled(config.id(), reported, waitedSoFar(d));
      }
      d.observer.settled(reported);
    } else {
      d.observer.settled(Outcome.ABANDONED);
    }
    finish(d);
  }

  private static Outcome afterWaiting(Outcome outcome) {
    return switch (outcome) {
      case PROCESSED -> Outcome.PARKED_THEN_PROCESSED;
      case DUPLICATE -> Outcome.PARKED_THEN_DUPLICATE;
      default -> outcome;
    };
  }

  /** Takes {@code d} out of its line and hands the line to the next delivery, if any. */
  private void finish(Delivery d) {
    Delivery next = null;
    synchronized (lines) {
      leave(d);
      if (d.line == null) {
        return;
      }
      Deque<Delivery> line = lines.get(d.line);
      if (line == null || !line.remove(d)) {
        return;
      }
      next = line.peekFirst();
      if (next == null) {
        lines.remove(d.line);
        return;
      }
      // The next one heads the line now: its own deadline still applies when it finds the key
      // held; until a handler thread takes it, it waits (and a stop releases it) like a parked one.
      if (next.timer != null) {
        next.timer.cancel(false);
        next.timer = null;
      }
      next.state = State.PARKED;
    }
    handOver(next);
  }

  /** Runs a line's head that waits on a handler thread of the subscription. */
  private void handOver(Delivery d) {
    try {
      parking.handlers().execute(() -> resume(d));
    } catch (RejectedExecutionException e) {
      // The handler threads are gone: the subscriber is stopping.
      boolean mine;
      synchronized (lines) {
        mine = d.state == State.PARKED;
        if (mine) {
          d.state = State.RUNNING;
        }
      }
      if (mine) {
        settle(d, Outcome.REFUSED_AT_SHUTDOWN, Duration.ZERO);
      }
    }
  }

  /** A waiting head's turn, on a handler thread: runs it unless a stop released it meanwhile. */
  private void resume(Delivery d) {
    synchronized (lines) {
      if (d.state != State.PARKED) {
        return;
      }
      d.state = State.RUNNING;
      setWaiting(d, false);
      d.timer = null;
    }
    attempt(d);
  }

  /**
   * Parks {@code d}, whose key another claim holds, until its next retry.
   *
   * @return null if parked (nothing to settle now), else the outcome to settle it with: {@link
   *     Outcome#PARKED_TIMEOUT} past its deadline, {@link Outcome#REFUSED_AT_SHUTDOWN} once
   *     stopping
   */
  private Outcome park(Delivery d) {
    boolean first;
    boolean timedOut;
    Duration delay;
    synchronized (lines) {
      if (stopping) {
        return Outcome.REFUSED_AT_SHUTDOWN;
      }
      long now = parking.clock().millis();
      if (!d.waited()) {
        startWaiting(d);
      }
      timedOut = now >= d.deadlineMillis;
    }
    if (timedOut) {
      log.warn(
          "message {} waited {} (in-progress-max-wait) for key {}, still held by another claim"
              + " until {}; nacked for a later retry (attempt {})",
          d.message.messageId(),
          config.inProgressMaxWait(),
          keyLogFormat.apply(d.lockKey),
          d.heldUntil == null ? "?" : d.heldUntil,
          attempt(d.message));
      return Outcome.PARKED_TIMEOUT;
    }
    synchronized (lines) {
      if (stopping) {
        return Outcome.REFUSED_AT_SHUTDOWN;
      }
      long now = parking.clock().millis();
      Duration untilExpiry =
          d.heldUntil == null ? null : Duration.ofMillis(d.heldUntil.toEpochMilli() - now);
      delay =
          ParkBackoff.delay(
              d.polls++,
              untilExpiry,
              Duration.ofMillis(d.deadlineMillis - now),
              parking.random().getAsDouble());
      d.state = State.PARKED;
      setWaiting(d, true);
      first = !d.logged;
      d.logged = true;
      d.timer = parking.timer().schedule(() -> handOver(d), delay);
    }
    if (first) {
      log.info(
          "key {} is held by another claim until {}; message {} (attempt {}) parked: its claim is"
              + " retried until the lease ends, for at most {}",
          keyLogFormat.apply(d.lockKey),
          d.heldUntil == null ? "?" : d.heldUntil,
          d.message.messageId(),
          attempt(d.message),
          config.inProgressMaxWait());
    } else {
      log.debug(
          "key {} still held; message {} retries its claim in {}",
          keyLogFormat.apply(d.lockKey),
          d.message.messageId(),
          delay);
    }
    return null;
  }

  /** A queued delivery's deadline passed before its turn came: nacked, out of its line. */
  private void queuedTimedOut(Delivery d) {
    synchronized (lines) {
      if (d.state != State.QUEUED) {
        return;
      }
      leave(d);
      Deque<Delivery> line = lines.get(d.line);
      if (line != null) {
        line.remove(d);
      }
      d.timer = null;
    }
    if (d.settle()) {
      log.warn(
          "message {} (key {}) waited {} (in-progress-max-wait) behind an earlier delivery in this"
              + " process; nacked for a later retry (attempt {})",
          d.message.messageId(),
          keyLogFormat.apply(d.lockKey),
          config.inProgressMaxWait(),
          attempt(d.message));
      d.reply.nack();
      listener.settled(config.id(), Outcome.PARKED_TIMEOUT, Duration.ZERO);
      listener.parkedSettled(config.id(), Outcome.PARKED_TIMEOUT, waitedSoFar(d));
      d.observer.settled(Outcome.PARKED_TIMEOUT);
    }
  }

  /** Starts {@code d}'s wait and deadline; guarded by lines. */
  private void startWaiting(Delivery d) {
    d.waitStartedMillis = parking.clock().millis();
    d.deadlineMillis = d.waitStartedMillis + config.inProgressMaxWait().toMillis();
    setWaiting(d, true);
  }

  /** Marks {@code d} settled or about to be: no longer waiting, its timer cancelled. */
  private void leave(Delivery d) {
    d.state = State.DONE;
    setWaiting(d, false);
    if (d.timer != null) {
      d.timer.cancel(false);
      d.timer = null;
    }
  }

  private void setWaiting(Delivery d, boolean waiting) {
    if (d.waiting != waiting) {
      d.waiting = waiting;
      listener.parked(config.id(), waiting ? 1 : -1);
    }
  }

  private Duration waitedSoFar(Delivery d) {
    long started;
    synchronized (lines) {
      started = d.waitStartedMillis;
    }
    return started < 0
        ? Duration.ZERO
        : Duration.ofMillis(Math.max(0, parking.clock().millis() - started));
  }

  private Outcome run(Delivery d, InFlight.Entry entry) {
    InboundMessage message = d.message;
    if (config.guard() == GuardMode.NONE) {
      return runUnguarded(message, entry);
    }
    // Resolved once when the delivery lined up (a parked delivery's retries reuse it).
    Optional<String> key = d.lockKey != null ? Optional.of(d.lockKey) : storedKey(message);
    if (key.isEmpty()) {
      return unkeyed(
          message, entry, "no-key", "no key: " + config.key().text() + " did not resolve");
    }
    // Validated as a whole by the guard, once, before any I/O.
    String k = key.get();
    entry.key = k;
    entry.observer.keyResolved(k);
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
        // Thrown by the handler, not the guard's key check.
        return handlerFailed(message, entry, e);
      }
      MDC.remove(MdcKeys.KEY);
      return unkeyed(message, entry, "invalid-key", "invalid key: " + e.getMessage());
    } catch (KeyInProgressException e) {
      return inProgress(d, k, e);
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
      // The guard released the claim before rethrowing, so a corrected republish can run.
      return handlerFailed(message, entry, e);
    }
  }

  /**
   * The key is not available: held by another claim (parked by the caller when the delivery lines
   * up, the old nack with a WARN when parking is off), or DONE under a mutex (nacked, WARN).
   */
  private Outcome inProgress(Delivery d, String k, KeyInProgressException e) {
    if (e.reason() == KeyInProgressException.Reason.HELD_BY_OTHER && d.line != null) {
      d.heldUntil = e.leaseExpiry().orElse(null);
      d.heldByOther = true;
      return Outcome.IN_PROGRESS;
    }
    // With parking off, every delivery of a held key comes here: one line per interval, not one
    // per delivery (the settled counter counts them all).
    RepeatLimiter.Decision once = repeats.check("in-progress:" + e.reason());
    String why =
        e.reason() == KeyInProgressException.Reason.DONE
            ? "DONE, and a mutex never runs over a completed key"
            : "held until " + e.leaseExpiry().map(Instant::toString).orElse("?");
    if (once.write()) {
      log.warn(
          "key {} is in progress elsewhere ({}); delivery attempt {} of message {} nacked for a"
              + " later retry{}",
          keyLogFormat.apply(k),
          why,
          attempt(d.message),
          d.message.messageId(),
          once.suppressedNote());
    } else {
      log.debug(
          "key {} is in progress elsewhere ({}); message {} nacked",
          keyLogFormat.apply(k),
          why,
          d.message.messageId());
    }
    return Outcome.IN_PROGRESS;
  }

  /** The shared timer of dispatchers built without one (tests): a daemon thread. */
  private static final class SharedTimer {
    static final ScheduledExecutorService INSTANCE =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "pubsub-worker-park-timer-shared");
              t.setDaemon(true);
              return t;
            });
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
    entry.observer.fenced(ctx.fencingToken());
    MDC.put(MdcKeys.FENCE, Long.toString(ctx.fencingToken()));
    handle(message, entry, new GuardedContext(config.id(), ctx));
    return null;
  }

  /** Runs the handler inside its tracing scope. */
  private void handle(InboundMessage message, InFlight.Entry entry, HandlerContext context)
      throws Exception {
    DeliveryObserver.Scope handling = entry.observer.handlerStarted();
    try {
      handler.handle(message, context);
    } catch (Exception | Error e) {
      entry.observer.handlerFailed(e);
      throw e;
    } finally {
      handling.close();
    }
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

  /**
   * A message without a (valid) key is a terminal failure when fail closed: it never gains a key,
   * so it is dead-lettered at once (or, without a dead-letter topic, nacked with an ERROR).
   */
  private Outcome unkeyed(
      InboundMessage message, InFlight.Entry entry, String errorClass, String why) {
    if (config.allowUnguarded()) {
      log.debug("message {} has {}; running unguarded (allow-unguarded)", message.messageId(), why);
      return runUnguarded(message, entry);
    }
    return deadLetters.deadLetter(
        message,
        new DeadLetters.Failure(
            errorClass,
            why,
            "has "
                + why
                + " and is not run (fail closed; set allow-unguarded = true to run such messages"
                + " unguarded)",
            Outcome.UNKEYED,
            null));
  }

  private Outcome runUnguarded(InboundMessage message, InFlight.Entry entry) {
    try {
      handle(message, entry, new UnguardedContext(config.id()));
      return Outcome.UNGUARDED;
    } catch (Exception e) {
      return handlerFailed(message, entry, e);
    }
  }

  private Outcome handlerFailed(InboundMessage message, InFlight.Entry entry, Exception e) {
    if (entry.settled.get()) {
      // Abandoned at shutdown: already released and nacked; the interrupt is why it stopped.
      log.info(
          "handler {} on message {} stopped after being abandoned at shutdown: {}",
          config.handler(),
          message.messageId(),
          e.toString());
      return Outcome.FAILED;
    }
    Optional<Throwable> poison = terminal.find(e);
    if (poison.isPresent()) {
      Throwable p = poison.get();
      return deadLetters.deadLetter(
          message,
          new DeadLetters.Failure(
              p.getClass().getName(),
              p.getMessage(),
              "failed in handler " + config.handler() + " with the terminal " + p,
              Outcome.FAILED,
              e));
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
    return Outcome.FAILED;
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
