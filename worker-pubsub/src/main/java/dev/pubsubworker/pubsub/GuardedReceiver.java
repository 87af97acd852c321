package dev.pubsubworker.pubsub;

import com.google.api.core.ApiFuture;
import com.google.api.core.ApiFutureCallback;
import com.google.api.core.ApiFutures;
import com.google.cloud.pubsub.v1.AckReplyConsumer;
import com.google.cloud.pubsub.v1.AckReplyConsumerWithResponse;
import com.google.cloud.pubsub.v1.AckResponse;
import com.google.cloud.pubsub.v1.MessageReceiver;
import com.google.cloud.pubsub.v1.MessageReceiverWithAckResponse;
import com.google.common.util.concurrent.MoreExecutors;
import com.google.pubsub.v1.PubsubMessage;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.api.PoisonMessageException;
import dev.pubsubworker.core.CallOptions;
import dev.pubsubworker.core.IdempotencyGuard;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.DoubleSupplier;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * Exactly-once processing for a google-cloud-pubsub {@code Subscriber}: a receiver that runs each
 * message's {@link MessageHandler} under an {@link IdempotencyGuard} and settles the delivery by
 * what happened. It is a {@link MessageReceiverWithAckResponse} (every ack's {@link AckResponse} is
 * checked; use it on subscriptions with exactly-once delivery) and, through {@link
 * #asMessageReceiver()}, a plain {@link MessageReceiver}.
 *
 * <pre>{@code
 * GuardedReceiver receiver =
 *     GuardedReceiver.newBuilder("orders", handler)
 *         .guard(IdempotencyGuard.newBuilder(backend).build())
 *         .key(MessageKey.attribute("order_id").withNamespace("orders"))
 *         .deadLetters(DeadLetterPublisher.of(deadLetterTopicPublisher))
 *         .build();
 * Subscriber subscriber = Subscriber.newBuilder(subscriptionPath, receiver).build();
 * }</pre>
 *
 * <h2>What happens to a message</h2>
 *
 * <table>
 *   <caption>Outcome to acknowledgement</caption>
 *   <tr><th>case</th><th>reply</th><th>{@link Outcome}</th></tr>
 *   <tr><td>handler returned</td><td>ack</td><td>{@code PROCESSED}; {@code UNGUARDED} with
 *       {@link GuardMode#NONE}</td></tr>
 *   <tr><td>key already DONE (a redelivery or a republish)</td><td>ack, handler skipped</td>
 *       <td>{@code DUPLICATE}</td></tr>
 *   <tr><td>key held by another live claim</td><td><b>parked</b>: no reply yet, the claim retried
 *       (backoff from 200 ms doubling to 5 s, at the latest when the holder's lease ends); then ack
 *       as a duplicate or run and ack; nack only after {@link Builder#inProgressMaxWait} (WARN)</td>
 *       <td>{@code PARKED_THEN_DUPLICATE}, {@code PARKED_THEN_PROCESSED}, {@code
 *       PARKED_TIMEOUT}</td></tr>
 *   <tr><td>key already running or waiting in this receiver</td><td>queued locally behind it,
 *       first in first out per key, with no lock-store call; then as above</td><td>as above</td></tr>
 *   <tr><td>key held, with {@code inProgressMaxWait} zero; or a mutex over a DONE key</td>
 *       <td>nack at once, WARN with the delivery attempt</td><td>{@code IN_PROGRESS}</td></tr>
 *   <tr><td>handler threw</td><td>nack, the error logged (at most once per {@link
 *       #REPEAT_INTERVAL} per exception class)</td><td>{@code FAILED}</td></tr>
 *   <tr><td>handler threw a terminal exception ({@link TerminalFailures}: {@link
 *       PoisonMessageException} by default, itself or as a cause)</td><td>published to the
 *       dead-letter topic, then ack; the guard released the claim</td><td>{@code
 *       DEAD_LETTERED}</td></tr>
 *   <tr><td>no key, or one the lock store refuses</td><td>terminal (fail closed): published to
 *       the dead-letter topic, then ack; the handler never runs. Run unguarded instead with {@link
 *       Builder#allowUnguarded}</td><td>{@code DEAD_LETTERED} ({@code UNGUARDED})</td></tr>
 *   <tr><td>terminal, but the dead-letter publish failed</td><td>nack, ERROR</td>
 *       <td>{@code DEAD_LETTER_FAILED}</td></tr>
 *   <tr><td>terminal, but no {@link Builder#deadLetters dead-letter publisher}</td><td>nack,
 *       ERROR</td><td>{@code FAILED}, or {@code UNKEYED} for a missing key</td></tr>
 *   <tr><td>DONE could not be written, or the claim was taken over, after the handler
 *       succeeded</td><td>ack, ERROR for alerting (never replay a side effect)</td><td>{@code
 *       COMPLETE_FAILED}, {@code FENCED_OUT}</td></tr>
 *   <tr><td>taken over at a transactional commit (rolled back)</td><td>ack, no alert (the new
 *       holder runs it)</td><td>{@code FENCED_OUT_ROLLED_BACK}</td></tr>
 *   <tr><td>payload fingerprint differs and the guard's policy rejects it</td><td>nack,
 *       WARN</td><td>{@code FINGERPRINT_REJECTED}</td></tr>
 *   <tr><td>lock store failed before the handler ran</td><td>nack, ERROR (limited per cause
 *       class)</td><td>{@code STORE_FAILED}</td></tr>
 *   <tr><td>arrived after {@link #beginStop()}, or waiting (parked or queued) at {@link
 *       #nackWaiting()}</td><td>nack, nothing runs</td><td>{@code REFUSED_AT_SHUTDOWN}</td></tr>
 *   <tr><td>handler still running at {@link #abandonRunning}</td><td>claim released, handler
 *       interrupted, nack</td><td>{@code ABANDONED}</td></tr>
 * </table>
 *
 * <p>Through the {@link MessageReceiverWithAckResponse} form every ack's response is reported to
 * the listeners, and one that is not {@link AckResponse#SUCCESSFUL} is logged at WARN: Pub/Sub
 * redelivers that message, and under {@link GuardMode#LOCK} its DONE record makes the redelivery a
 * duplicate.
 *
 * <h2>Parking</h2>
 *
 * A parked delivery holds no thread: the {@code Subscriber} keeps it outstanding (it extends its
 * ack deadline, up to its {@code maxAckExtensionPeriod}, and counts it against flow control), a
 * timer retries its claim, and the retry runs on the {@link Builder#handlerExecutor handler
 * executor}. It spends no delivery attempt, so a message that only had to wait for a crashed
 * holder's lease is never dead-lettered for it. Deliveries of a key this receiver is already
 * running, or has parked, wait in a FIFO line behind it; with {@link Builder#messageOrdering} on,
 * deliveries of one ordering key do too, so parking keeps their order. Each waiting delivery has
 * its own deadline, {@code inProgressMaxWait} after it began to wait. Waiting deliveries are
 * bounded by the {@code Subscriber}'s flow control: keep its window well above what one hot key can
 * collect. At most one INFO line per parked delivery.
 *
 * <h2>Stopping</h2>
 *
 * A graceful stop, in order: {@link #beginStop()} (no delivery starts from then on), the {@code
 * Subscriber}'s {@code stopAsync()} (no more pulls), {@link #nackWaiting()} (deliveries that never
 * started are nacked at once), {@link #awaitIdle} (the running handlers get the grace), {@link
 * #abandonRunning} (the rest are abandoned). {@link #stop(Duration)} does the four receiver steps
 * at once. The handlers that run at any moment are {@link #running()}, the oldest since {@link
 * #oldestRunningSince()}.
 *
 * <p>Thread-safe: the client calls it from many threads at once.
 */
public final class GuardedReceiver implements MessageReceiverWithAckResponse, AutoCloseable {

  /** The default of {@link Builder#inProgressMaxWait}: 2 minutes. */
  public static final Duration DEFAULT_IN_PROGRESS_MAX_WAIT = Duration.ofMinutes(2);

  /** The default of {@link Builder#handlerExecutor}'s own pool: 5 threads (as a Subscriber's). */
  public static final int DEFAULT_RETRY_THREADS = 5;

  /** The release budget of {@link #stop(Duration)}: 5 seconds. */
  public static final Duration DEFAULT_RELEASE_BUDGET = Duration.ofSeconds(5);

  /** The least time between two log lines of one repeated kind (store failure, unkeyed, poison). */
  public static final Duration REPEAT_INTERVAL = Duration.ofSeconds(10);

  /**
   * The latest a parked delivery retries its claim after the holder's lease lapsed (1.05 s): the
   * longest jitter of a retry cut down to the lease expiry. Part of the time a message waits after
   * its holder crashed: at most the holder's lease plus this.
   */
  public static final Duration MAX_RETRY_LATENESS = ParkBackoff.MAX_LATENESS;

  /**
   * What {@link #abandonRunning} did.
   *
   * @param handlers deliveries whose handler was still running: interrupted and nacked
   * @param claimsReleased of those, the ones whose claim was released (the others had no claim yet,
   *     ran unguarded, ended on their own meanwhile, or their release failed or ran out of time)
   */
  public record Abandoned(int handlers, int claimsReleased) {}

  private final String subscription;
  private final @Nullable IdempotencyGuard guard;
  private final Dispatcher dispatcher;
  private final List<ExecutorService> owned;
  private final AtomicBoolean closed = new AtomicBoolean();

  private GuardedReceiver(Builder b, List<ExecutorService> owned) {
    this.subscription = b.subscription;
    this.guard = b.guard;
    this.owned = owned;
    ReceiverListener listener = new Listeners(b.listeners);
    IdempotencyGuard g = b.guard;
    UnaryOperator<String> keyLogFormat = g == null ? UnaryOperator.identity() : g.keyLogFormat();
    RepeatLimiter repeats = new RepeatLimiter(REPEAT_INTERVAL, b.clock);
    DeadLetters deadLetters =
        new DeadLetters(
            b.subscription,
            b.subscriptionPath == null ? b.subscription : b.subscriptionPath,
            b.deadLetters,
            b.workerId == null ? DeadLetters.workerId("") : b.workerId,
            repeats,
            b.clock);
    Failures failures =
        new Failures(
            b.subscription,
            b.handlerName == null ? b.handler.getClass().getName() : b.handlerName,
            b.terminalFailures,
            deadLetters,
            repeats,
            keyLogFormat);
    MessageKey key = b.key;
    DeliveryKeys keys =
        b.mode == GuardMode.NONE || g == null || key == null
            ? null
            : new DeliveryKeys(key, g.backend(), b.messageOrdering);
    GuardedRun run =
        new GuardedRun(
            b.subscription,
            b.mode,
            g,
            keys,
            b.callOptions,
            b.fingerprint,
            b.allowUnguarded,
            b.handler,
            failures,
            keyLogFormat);
    ScheduledExecutorService timer = b.timer;
    Executor handlers = b.handlerExecutor;
    Dispatcher.Parking parking =
        b.inProgressMaxWait.isZero() || timer == null || handlers == null
            ? null
            : new Dispatcher.Parking(b.inProgressMaxWait, timer, handlers, b.random, keyLogFormat);
    this.dispatcher =
        new Dispatcher(
            b.subscription,
            listener,
            b.clock,
            keys,
            run,
            failures,
            new Running(b.subscription, listener),
            parking);
  }

  /**
   * A builder for a receiver of {@code subscription}'s messages that runs {@code handler}.
   *
   * @param subscription how log lines, the MDC ({@link MdcKeys#SUBSCRIPTION}), listeners and
   *     metrics name the subscription, e.g. its id; not empty
   * @param handler runs each message; must be thread-safe
   * @throws IllegalArgumentException if {@code subscription} is empty
   */
  public static Builder newBuilder(String subscription, MessageHandler handler) {
    return new Builder(subscription, handler);
  }

  /** Handles one delivery (the exactly-once form): see the class documentation. */
  @Override
  public void receiveMessage(PubsubMessage message, AckReplyConsumerWithResponse consumer) {
    String messageId = message.getMessageId();
    dispatcher.dispatch(
        message,
        new Delivery.Reply() {
          @Override
          public void ack() {
            ApiFuture<AckResponse> future = consumer.ack();
            ApiFutures.addCallback(
                future,
                new ApiFutureCallback<AckResponse>() {
                  @Override
                  public void onSuccess(AckResponse response) {
                    dispatcher.ackResponse(messageId, response);
                  }

                  @Override
                  public void onFailure(Throwable t) {
                    dispatcher.ackResponse(messageId, AckResponse.OTHER);
                  }
                },
                MoreExecutors.directExecutor());
          }

          @Override
          public void nack() {
            // Fire-and-forget: a failed nack only delays the redelivery.
            ApiFuture<AckResponse> unused = consumer.nack();
          }
        });
  }

  /**
   * This receiver as a plain {@link MessageReceiver}, for a {@code Subscriber} whose ack responses
   * need no checking (a subscription without exactly-once delivery). The same receiver either way:
   * one stop, one set of lines.
   */
  public MessageReceiver asMessageReceiver() {
    return (PubsubMessage message, AckReplyConsumer consumer) ->
        dispatcher.dispatch(
            message,
            new Delivery.Reply() {
              @Override
              public void ack() {
                consumer.ack();
              }

              @Override
              public void nack() {
                consumer.nack();
              }
            });
  }

  /**
   * From now on no delivery starts: every delivery that reaches the receiver, and every parked
   * retry that comes due, is nacked without running anything ({@link Outcome#REFUSED_AT_SHUTDOWN}).
   * The deliveries running at this moment are the only ones that can still run a handler.
   * Idempotent.
   *
   * @return how many deliveries were running at that moment
   */
  public int beginStop() {
    return dispatcher.running().beginStop();
  }

  /**
   * Nacks every delivery that waits (parked, or queued behind its key) without running it, and
   * makes every later wait a nack ({@link Outcome#REFUSED_AT_SHUTDOWN}). Call it after {@link
   * #beginStop()}, and after the {@code Subscriber}'s {@code stopAsync()} so that the nacked
   * messages go to another subscriber.
   *
   * @return how many deliveries this nacked
   */
  public int nackWaiting() {
    KeyLines l = dispatcher.lines();
    return l == null ? 0 : l.stop();
  }

  /**
   * Waits until no handler runs, or {@code timeout} passes.
   *
   * @return true if none runs
   * @throws InterruptedException if the calling thread was interrupted
   */
  public boolean awaitIdle(Duration timeout) throws InterruptedException {
    return dispatcher.running().awaitEmpty(Objects.requireNonNull(timeout, "timeout"));
  }

  /**
   * Abandons every handler still running: its delivery can no longer be acked, its claim is
   * released through the guard ({@link IdempotencyGuard#abandon}: the key is reclaimable at once
   * and the claim can never write DONE), its thread interrupted and its message nacked ({@link
   * Outcome#ABANDONED}, WARN). The releases run on a thread of their own and get at most {@code
   * releaseBudget} in all; a claim not released by then lapses with its lease. A handler that
   * ignores the interrupt and still returns is fenced out at DONE. Call it after {@link
   * #beginStop()}, when the grace is over.
   *
   * @return what was abandoned
   */
  public Abandoned abandonRunning(Duration releaseBudget) {
    return dispatcher
        .running()
        .abandonAll(guard, Objects.requireNonNull(releaseBudget, "releaseBudget"));
  }

  /**
   * Stops gracefully within {@code grace} plus at most {@link #DEFAULT_RELEASE_BUDGET}: {@link
   * #beginStop()}, {@link #nackWaiting()}, {@link #awaitIdle} for {@code grace}, then {@link
   * #abandonRunning} of what still runs. Call the {@code Subscriber}'s {@code stopAsync()} first
   * (or between {@code beginStop()} and the rest, as the class describes) and its {@code
   * awaitTerminated()} after. An interrupt of the calling thread ends the grace early.
   *
   * @return what had to be abandoned at the grace
   */
  public Abandoned stop(Duration grace) {
    Objects.requireNonNull(grace, "grace");
    beginStop();
    nackWaiting();
    boolean idle;
    try {
      idle = awaitIdle(grace);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      idle = false;
    }
    return idle ? new Abandoned(0, 0) : abandonRunning(DEFAULT_RELEASE_BUDGET);
  }

  /**
   * How many deliveries {@link #beginStop()} refused since it ran (arrivals and parked retries).
   */
  public int refusedSinceStop() {
    return dispatcher.running().refused();
  }

  /** The subscription's name as the builder was given it (log lines, listeners, metrics). */
  public String subscription() {
    return subscription;
  }

  /** How many deliveries are being handled right now. */
  public int running() {
    return dispatcher.running().size();
  }

  /**
   * When the oldest delivery that is being handled right now began its run, on the builder's
   * {@linkplain Builder#clock clock}; empty when none is. A run includes its claim, handler and
   * DONE write; a parked delivery is not running.
   */
  public Optional<Instant> oldestRunningSince() {
    return dispatcher.running().oldestSince();
  }

  /**
   * The delivery that is being handled right now and began its run first, with the thread that runs
   * it; empty when none is. See {@link #oldestRunningSince()}.
   */
  public Optional<RunningDelivery> oldestRunning() {
    return dispatcher.running().oldest();
  }

  /** How many deliveries wait right now without a thread: parked, or queued behind their key. */
  public int waiting() {
    KeyLines l = dispatcher.lines();
    return l == null ? 0 : l.waiting();
  }

  /**
   * {@link #beginStop()} and {@link #nackWaiting()}, then shuts down the timer and handler executor
   * the builder created (not ones passed to it). Running handlers are left to finish; the guard,
   * the dead-letter publisher and the {@code Subscriber} stay the caller's. Idempotent.
   */
  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    beginStop();
    nackWaiting();
    owned.forEach(ExecutorService::shutdownNow);
  }

  @Override
  public String toString() {
    return "GuardedReceiver[" + subscription + "]";
  }

  /**
   * Builds a {@link GuardedReceiver}. Every setter checks its argument and says what was wrong; the
   * default of each is stated on it. Not thread-safe; build once.
   */
  public static final class Builder {

    private final String subscription;
    private final MessageHandler handler;
    private @Nullable IdempotencyGuard guard;
    private GuardMode mode = GuardMode.LOCK;
    private @Nullable MessageKey key;
    private CallOptions callOptions = CallOptions.defaults();
    private boolean fingerprint;
    private boolean allowUnguarded;
    private TerminalFailures terminalFailures = TerminalFailures.poisonOnly();
    private @Nullable DeadLetterPublisher deadLetters;
    private @Nullable String subscriptionPath;
    private @Nullable String workerId;
    private @Nullable String handlerName;
    private Duration inProgressMaxWait = DEFAULT_IN_PROGRESS_MAX_WAIT;
    private @Nullable ScheduledExecutorService timer;
    private @Nullable Executor handlerExecutor;
    private Clock clock = Clock.systemUTC();
    private DoubleSupplier random = () -> ThreadLocalRandom.current().nextDouble();
    private boolean messageOrdering;
    private final List<ReceiverListener> listeners = new ArrayList<>();

    private Builder(String subscription, MessageHandler handler) {
      this.subscription = requireText(subscription, "subscription");
      this.handler = Objects.requireNonNull(handler, "handler");
    }

    /**
     * The guard each message runs under; its key log format is how keys appear in the receiver's
     * log lines and MDC too. Required unless the mode is {@link GuardMode#NONE}. The guard stays
     * the caller's: close it after the receiver's stop.
     */
    public Builder guard(IdempotencyGuard value) {
      this.guard = Objects.requireNonNull(value, "guard");
      return this;
    }

    /**
     * How the handler runs: {@code lock}, {@code mutex} or unguarded. Default {@link
     * GuardMode#LOCK}.
     */
    public Builder mode(GuardMode value) {
      this.mode = Objects.requireNonNull(value, "mode");
      return this;
    }

    /**
     * What a message's idempotency key is, exactly as the lock store holds it (see {@link
     * MessageKey} on namespaces). Required unless the mode is {@link GuardMode#NONE}: there is no
     * default, since the key decides what counts as a duplicate.
     */
    public Builder key(MessageKey value) {
      this.key = Objects.requireNonNull(value, "key");
      return this;
    }

    /**
     * The options of every claim, over the guard's defaults (lease, ttl, heartbeat, interrupt on
     * lease loss, fingerprint policy, transactional). Default {@link CallOptions#defaults()}: the
     * guard's own.
     */
    public Builder callOptions(CallOptions value) {
      this.callOptions = Objects.requireNonNull(value, "callOptions");
      return this;
    }

    /**
     * Whether each claim carries the SHA-256 of the message's payload as its fingerprint, so that a
     * key reused for a different payload is reported (or rejected: the guard's fingerprint policy).
     * Default false.
     */
    public Builder fingerprint(boolean value) {
      this.fingerprint = value;
      return this;
    }

    /**
     * Whether a message without a (valid) key runs its handler unguarded ({@link
     * Outcome#UNGUARDED}) instead of being dead-lettered without running (fail closed). Default
     * false.
     */
    public Builder allowUnguarded(boolean value) {
      this.allowUnguarded = value;
      return this;
    }

    /**
     * Which handler failures are terminal (dead-lettered after one attempt). Default {@link
     * TerminalFailures#poisonOnly()}.
     */
    public Builder terminalFailures(TerminalFailures value) {
      this.terminalFailures = Objects.requireNonNull(value, "terminalFailures");
      return this;
    }

    /**
     * Where terminal failures are published: the subscription's dead-letter topic. Default none: a
     * terminal failure is nacked with an ERROR (and comes back until the subscription's own
     * dead-letter policy, if any, takes it).
     */
    public Builder deadLetters(DeadLetterPublisher value) {
      this.deadLetters = Objects.requireNonNull(value, "deadLetters");
      return this;
    }

    /**
     * The subscription's full path, {@code projects/P/subscriptions/S}, that dead letters name as
     * their source ({@link DeadLetterAttributes#SUBSCRIPTION}). Default: the subscription name
     * given to {@link #newBuilder}.
     */
    public Builder subscriptionPath(String value) {
      this.subscriptionPath = requireText(value, "subscriptionPath");
      return this;
    }

    /**
     * Who dead-letters, as dead letters say ({@link DeadLetterAttributes#WORKER_ID}). Default: the
     * {@code HOSTNAME} environment variable (a pod's name on Kubernetes), else the host's name.
     */
    public Builder workerId(String value) {
      this.workerId = requireText(value, "workerId");
      return this;
    }

    /** How log lines and dead letters name the handler. Default: the handler's class name. */
    public Builder handlerName(String value) {
      this.handlerName = requireText(value, "handlerName");
      return this;
    }

    /**
     * How long a delivery whose key is held (by another claim, or by a delivery of this receiver)
     * waits, parked, before it is nacked; zero turns parking off (a held key is nacked at once,
     * {@link Outcome#IN_PROGRESS}). The worst case is this plus one handler-thread hand-off: the
     * last retry is never scheduled past the deadline. Keep it below the {@code Subscriber}'s
     * {@code maxAckExtensionPeriod}, which bounds how long the client keeps a message. Default
     * {@link #DEFAULT_IN_PROGRESS_MAX_WAIT} (2 minutes).
     *
     * @throws IllegalArgumentException if negative
     */
    public Builder inProgressMaxWait(Duration value) {
      Objects.requireNonNull(value, "inProgressMaxWait");
      if (value.isNegative()) {
        throw new IllegalArgumentException(
            "inProgressMaxWait must be zero or positive, but was " + value);
      }
      this.inProgressMaxWait = value;
      return this;
    }

    /**
     * The timer of parked retries and waiting deadlines; its tasks only hand work to the handler
     * executor. Default: a daemon thread of the receiver's own, stopped by {@link #close()}. One
     * passed here stays the caller's.
     */
    public Builder timer(ScheduledExecutorService value) {
      this.timer = Objects.requireNonNull(value, "timer");
      return this;
    }

    /**
     * Where a parked delivery's retry, and the next delivery of a key's line, run. Pass the {@code
     * Subscriber}'s own executor (its {@code ExecutorProvider}'s) to keep every handler on its
     * threads. Default: a pool of {@link #DEFAULT_RETRY_THREADS} daemon threads of the receiver's
     * own, stopped by {@link #close()}. One passed here stays the caller's; once it refuses tasks
     * (shut down), a waiting delivery whose turn comes is nacked unrun.
     */
    public Builder handlerExecutor(Executor value) {
      this.handlerExecutor = Objects.requireNonNull(value, "handlerExecutor");
      return this;
    }

    /**
     * The clock of waiting deadlines, lease expiries, {@link #oldestRunningSince()}, log-line
     * limits and the dead letters' time. Default {@link Clock#systemUTC()}.
     */
    public Builder clock(Clock value) {
      this.clock = Objects.requireNonNull(value, "clock");
      return this;
    }

    /**
     * Numbers in [0, 1) that pick each parked retry's jitter (so waiters of one key in several
     * processes do not retry in step). Default {@link ThreadLocalRandom}.
     */
    public Builder random(DoubleSupplier value) {
      this.random = Objects.requireNonNull(value, "random");
      return this;
    }

    /**
     * Whether the subscription has message ordering on: then deliveries with an ordering key wait
     * in line behind the earlier ones of that ordering key, so parking keeps their order (the
     * client hands a key's next message over as soon as the previous call returns, not when it is
     * acked). Default false. Turning it on for an unordered subscription costs only concurrency.
     */
    public Builder messageOrdering(boolean value) {
      this.messageOrdering = value;
      return this;
    }

    /**
     * Adds a listener of outcomes and tracing hooks (may be called more than once). Default none.
     */
    public Builder listener(ReceiverListener value) {
      this.listeners.add(Objects.requireNonNull(value, "listener"));
      return this;
    }

    /**
     * Builds the receiver, creating the timer and handler executor it owns if parking is on and
     * none was given.
     *
     * @throws IllegalStateException if the mode guards ({@code LOCK} or {@code MUTEX}) and no
     *     {@link #guard} or {@link #key} was set
     */
    public GuardedReceiver build() {
      if (mode != GuardMode.NONE) {
        if (guard == null) {
          throw new IllegalStateException(
              "guard is not set: mode " + mode + " needs an IdempotencyGuard (or mode NONE)");
        }
        if (key == null) {
          throw new IllegalStateException(
              "key is not set: mode " + mode + " needs a MessageKey (e.g. MessageKey.messageId())");
        }
      }
      List<ExecutorService> owned = new ArrayList<>();
      boolean parks = mode != GuardMode.NONE && !inProgressMaxWait.isZero();
      if (parks && timer == null) {
        ScheduledThreadPoolExecutor t =
            new ScheduledThreadPoolExecutor(1, daemon("pubsub-worker-park-timer-" + subscription));
        t.setRemoveOnCancelPolicy(true);
        timer = t;
        owned.add(t);
      }
      if (parks && handlerExecutor == null) {
        ExecutorService pool =
            Executors.newFixedThreadPool(
                DEFAULT_RETRY_THREADS, daemon("pubsub-worker-retry-" + subscription + "-"));
        handlerExecutor = pool;
        owned.add(pool);
      }
      return new GuardedReceiver(this, owned);
    }

    private static ThreadFactory daemon(String name) {
      AtomicInteger n = new AtomicInteger();
      return r -> {
        Thread t = new Thread(r, name.endsWith("-") ? name + n.incrementAndGet() : name);
        t.setDaemon(true);
        return t;
      };
    }

    private static String requireText(String value, String name) {
      Objects.requireNonNull(value, name);
      if (value.isEmpty()) {
        throw new IllegalArgumentException(name + " must not be empty");
      }
      return value;
    }
  }
}
