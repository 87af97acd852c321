package dev.pubsubworker.spring.boot;

import com.google.cloud.pubsub.v1.Subscriber;
import com.google.cloud.spring.pubsub.core.subscriber.PubSubSubscriberOperations;
import com.google.cloud.spring.pubsub.support.PubSubSubscriptionUtils;
import com.google.cloud.spring.pubsub.support.PubSubTopicUtils;
import com.google.pubsub.v1.ProjectSubscriptionName;
import com.google.pubsub.v1.TopicName;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.pubsub.GuardMode;
import dev.pubsubworker.pubsub.GuardedReceiver;
import dev.pubsubworker.pubsub.TerminalFailures;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiFunction;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.context.SmartLifecycle;

/**
 * The application's guarded subscriptions: builds each one's {@link GuardedReceiver} (and its
 * guard) from {@code pubsub-worker.subscriptions.<id>} and hands its messages to it in the form
 * Spring Cloud GCP delivers them, then stops them all gracefully when the application context
 * closes. The auto-configuration provides the one instance.
 *
 * <pre>{@code
 * @Bean
 * GuardedSubscription orders(GuardedSubscriptions subscriptions, OrderService orders) {
 *   return subscriptions.subscribe("orders", (message, context) -> orders.place(message));
 * }
 * }</pre>
 *
 * <p>Three ways in, one receiver per id, the same outcome table:
 *
 * <ul>
 *   <li>{@link #subscribe}: the starter opens the subscription through {@code
 *       PubSubTemplate.subscribe} when the context starts and stops it at the close; the health
 *       indicator sees its {@code Subscriber}.
 *   <li>{@link #consumer}: a {@code Consumer<BasicAcknowledgeablePubsubMessage>} for your own
 *       {@code pubSubTemplate.subscribe(name, consumer)}.
 *   <li>{@code GuardedPubSubMessageHandler.of(consumer(id, handler))}: the end of a Spring
 *       Integration flow from a {@code PubSubInboundChannelAdapter} in {@code AckMode.MANUAL}.
 * </ul>
 *
 * <p>Each subscription has its own guard over the one {@link LockBackend}, sharing one heartbeat
 * scheduler, with the metrics and health listeners attached. {@link GuardedReceiverCustomizer} and
 * {@link IdempotencyGuardCustomizer} beans adjust the builders.
 *
 * <p><b>Stopping.</b> When the context closes (phase {@link #PHASE}, before Spring Integration's
 * endpoints and the default phase): no delivery starts any more, the subscribers this opened stop
 * pulling, waiting (parked) deliveries are nacked, running handlers get {@code
 * pubsub-worker.shutdown-grace}, those still running are abandoned (claim released, interrupted,
 * nacked), then the subscribers and the dead-letter publishers get 5 s to flush. So it takes at
 * most the grace plus 10 s, which must fit in {@code spring.lifecycle.timeout-per-shutdown-phase}:
 * the start fails if it does not.
 *
 * <p>Thread-safe.
 */
public final class GuardedSubscriptions implements SmartLifecycle, DisposableBean {

  /**
   * The lifecycle phase: stopped before Spring Integration's endpoints and the beans of the default
   * phase, after the web server's graceful shutdown.
   */
  public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;

  /** What the stop adds to the grace, at most: 5 s of releases and 5 s of flushing. */
  public static final Duration STOP_OVERHEAD = Duration.ofSeconds(10);

  private static final Duration RELEASE_BUDGET = GuardedReceiver.DEFAULT_RELEASE_BUDGET;
  private static final Duration FLUSH_BUDGET = Duration.ofSeconds(5);
  private static final Logger log = LoggerFactory.getLogger(GuardedSubscriptions.class);

  private final PubSubWorkerProperties properties;
  private final LockBackend backend;
  private final Wiring wiring;
  private final ScheduledThreadPoolExecutor heartbeats;
  private final Map<String, GuardedSubscription> subscriptions = new LinkedHashMap<>();
  private final List<IdempotencyGuard> guards = new ArrayList<>();
  private volatile boolean running;
  private boolean closed;

  GuardedSubscriptions(PubSubWorkerProperties properties, LockBackend backend, Wiring wiring) {
    this.properties = properties;
    this.backend = backend;
    this.wiring = wiring;
    AtomicInteger n = new AtomicInteger();
    this.heartbeats =
        new ScheduledThreadPoolExecutor(
            2,
            r -> {
              Thread t = new Thread(r, "pubsub-worker-heartbeat-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    heartbeats.setRemoveOnCancelPolicy(true);
  }

  /**
   * Opens subscription {@code id} through Spring Cloud GCP's {@code PubSubTemplate.subscribe} when
   * the application context starts (at once if it already has), running {@code handler} on every
   * message under the guard; stops it when the context closes. Call it from a {@code @Bean} method
   * and return the result.
   *
   * @param id an entry of {@code pubsub-worker.subscriptions}
   * @param handler runs each message; thread-safe
   * @throws IllegalArgumentException if {@code id} is not configured
   * @throws IllegalStateException if a receiver for {@code id} exists already, or there is no
   *     {@code PubSubTemplate} to subscribe with
   */
  public GuardedSubscription subscribe(String id, MessageHandler handler) {
    if (wiring.subscriber() == null) {
      throw new IllegalStateException(
          "no PubSubSubscriberOperations (PubSubTemplate) bean to subscribe "
              + id
              + " with: is spring.cloud.gcp.pubsub.enabled false?");
    }
    GuardedSubscription s = register(id, handler, true);
    synchronized (this) {
      if (running) {
        open(s);
      }
    }
    return s;
  }

  /**
   * The consumer of subscription {@code id}'s messages for {@code
   * pubSubTemplate.subscribe(subscriptionName, consumer)}, or for {@link
   * GuardedPubSubMessageHandler#of}: each message runs {@code handler} under the guard and is acked
   * or nacked by the outcome. The subscriber stays the application's; its receiver stops with the
   * context.
   *
   * @param id an entry of {@code pubsub-worker.subscriptions}
   * @param handler runs each message; thread-safe
   * @throws IllegalArgumentException if {@code id} is not configured
   * @throws IllegalStateException if a receiver for {@code id} exists already
   */
  public GuardedPubSubConsumer consumer(String id, MessageHandler handler) {
    return register(id, handler, false).consumer();
  }

  /** Subscription {@code id}, if a receiver was built for it. */
  public synchronized Optional<GuardedSubscription> subscription(String id) {
    return Optional.ofNullable(subscriptions.get(id));
  }

  /** Every subscription a receiver was built for, in the order they were. */
  public synchronized List<GuardedSubscription> subscriptions() {
    return List.copyOf(subscriptions.values());
  }

  private GuardedSubscription register(String id, MessageHandler handler, boolean subscribed) {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(handler, "handler");
    PubSubWorkerProperties.Subscription settings = properties.getSubscriptions().get(id);
    if (settings == null) {
      throw new IllegalArgumentException(
          PubSubWorkerProperties.PREFIX
              + ".subscriptions."
              + id
              + " is not configured (configured: "
              + properties.getSubscriptions().keySet()
              + ")");
    }
    synchronized (this) {
      if (closed) {
        throw new IllegalStateException("the guarded subscriptions are closed");
      }
      if (subscriptions.containsKey(id)) {
        throw new IllegalStateException(
            "subscription " + id + " has a receiver already: one consumer per subscription id");
      }
      GuardedSubscription s = build(id, settings, handler, subscribed);
      subscriptions.put(id, s);
      return s;
    }
  }

  private GuardedSubscription build(
      String id,
      PubSubWorkerProperties.Subscription s,
      MessageHandler handler,
      boolean subscribed) {
    String path = PubSubWorkerProperties.PREFIX + ".subscriptions." + id + ".";
    String name = s.subscriptionName(id);
    ProjectSubscriptionName subscription =
        PubSubSubscriptionUtils.toProjectSubscriptionName(name, wiring.projectId());
    checkAckExtension(path, name, s.getInProgressMaxWait());

    GuardedReceiver.Builder b =
        GuardedReceiver.newBuilder(id, handler)
            .mode(s.getGuard())
            .subscriptionPath(subscription.toString())
            .inProgressMaxWait(s.getInProgressMaxWait())
            .fingerprint(s.isFingerprint())
            .allowUnguarded(s.isAllowUnguarded())
            .messageOrdering(s.isMessageOrdering());
    if (s.getGuard() != GuardMode.NONE) {
      b.guard(guard(id, path, s))
          .key(MessageKeys.parse(s.getKey()).withNamespace(s.keyNamespace(id)));
    }
    if (!s.getPoisonExceptions().isEmpty()) {
      b.terminalFailures(
          TerminalFailures.of(
              PoisonExceptions.load(s.getPoisonExceptions(), wiring.classLoader())));
    }
    String topic = s.getDeadLetterTopic();
    if (topic != null) {
      b.deadLetters(
          wiring.deadLetters().forTopic(PubSubTopicUtils.toTopicName(topic, wiring.projectId())));
    }
    String workerId = properties.getWorkerId();
    if (workerId != null) {
      b.workerId(workerId);
    }
    if (handler.getClass().isSynthetic()) {
      b.handlerName(id); // a lambda's class name says nothing
    }
    wiring.receiverCustomizers().forEach(c -> c.customize(id, b));
    GuardedReceiver receiver = b.build();
    log.info(
        "guarded subscription {}: {} ({}, key {}{})",
        id,
        subscription,
        s.getGuard().name().toLowerCase(Locale.ROOT),
        s.getKey(),
        topic == null ? ", no dead-letter topic" : ", dead letters to " + topic);
    return new GuardedSubscription(
        id, subscription, GuardedPubSubConsumer.of(receiver), subscribed);
  }

  private IdempotencyGuard guard(String id, String path, PubSubWorkerProperties.Subscription s) {
    IdempotencyGuard.Builder g =
        IdempotencyGuard.newBuilder(backend)
            .heartbeatScheduler(heartbeats)
            .lease(s.getLease())
            .ttl(s.getTtl());
    if (s.isTransactional()) {
      try {
        g.transactional(true);
      } catch (IllegalArgumentException e) {
        throw new IllegalStateException(
            path
                + "transactional: needs the SQL lock store, but the lock store is "
                + backend.getClass().getSimpleName(),
            e);
      }
    }
    wiring.guardCustomizers().forEach(c -> c.customize(id, g));
    IdempotencyGuard guard = g.build();
    guards.add(guard);
    return guard;
  }

  /**
   * A parked delivery stays outstanding only as long as the subscriber extends its deadline: the
   * wait must end before the subscriber's max-ack-extension-period does.
   */
  private void checkAckExtension(String path, String name, Duration inProgressMaxWait) {
    if (inProgressMaxWait.isZero()) {
      return;
    }
    Long seconds = wiring.maxAckExtensionSeconds().apply(name, wiring.projectId());
    if (seconds != null && Duration.ofSeconds(seconds).compareTo(inProgressMaxWait) <= 0) {
      throw new IllegalStateException(
          path
              + "in-progress-max-wait ("
              + inProgressMaxWait
              + ") must be below the subscriber's max-ack-extension-period ("
              + seconds
              + "s, spring.cloud.gcp.pubsub): a parked message would be redelivered while it waits"
              + " (0 turns extension off altogether)");
    }
  }

  /** Starts the subscriptions of {@link #subscribe} and checks the dead-letter topics. */
  @Override
  public synchronized void start() {
    if (running || closed) {
      return;
    }
    Duration phaseTimeout = wiring.shutdownPhaseTimeout();
    Duration needed = properties.getShutdownGrace().plus(STOP_OVERHEAD);
    if (phaseTimeout.compareTo(needed) < 0) {
      throw new IllegalStateException(
          PubSubWorkerProperties.PREFIX
              + ".shutdown-grace ("
              + properties.getShutdownGrace()
              + ") plus "
              + STOP_OVERHEAD.toSeconds()
              + "s to release claims and flush must fit in"
              + " spring.lifecycle.timeout-per-shutdown-phase ("
              + phaseTimeout
              + "): raise that, or lower the grace");
    }
    for (GuardedSubscription s : subscriptions.values()) {
      PubSubWorkerProperties.Subscription settings = properties.getSubscriptions().get(s.id());
      String topic = settings == null ? null : settings.getDeadLetterTopic();
      if (topic != null) {
        wiring
            .topicCheck()
            .check(
                PubSubTopicUtils.toTopicName(topic, wiring.projectId()),
                PubSubWorkerProperties.PREFIX + ".subscriptions." + s.id() + ".dead-letter-topic");
      }
    }
    for (GuardedSubscription s : subscriptions.values()) {
      if (s.subscribed()) {
        open(s);
      }
    }
    running = true;
  }

  private void open(GuardedSubscription s) {
    PubSubSubscriberOperations operations = Objects.requireNonNull(wiring.subscriber());
    if (s.subscriber().isPresent()) {
      return;
    }
    Subscriber subscriber = operations.subscribe(s.subscription(), s.consumer());
    s.subscriber(subscriber);
  }

  @Override
  public void stop() {
    stopGracefully();
  }

  /** Stops on a thread of its own; Spring waits up to its shutdown-phase timeout. */
  @Override
  public void stop(Runnable callback) {
    Thread t =
        new Thread(
            () -> {
              try {
                stopGracefully();
              } finally {
                callback.run();
              }
            },
            "pubsub-worker-stop");
    t.setDaemon(true);
    t.start();
  }

  @Override
  public boolean isRunning() {
    return running;
  }

  @Override
  public int getPhase() {
    return PHASE;
  }

  /** Closes whatever a start that failed, or a context that never started, left open. */
  @Override
  public void destroy() {
    stopGracefully();
  }

  /** Whether the stop has begun (the health indicator reports OUT_OF_SERVICE). */
  boolean stopping() {
    synchronized (this) {
      return closed;
    }
  }

  private void stopGracefully() {
    List<GuardedSubscription> all;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      running = false;
      all = List.copyOf(subscriptions.values());
    }
    if (!all.isEmpty()) {
      stop(all, properties.getShutdownGrace());
    }
    for (IdempotencyGuard g : guards) {
      g.close();
    }
    heartbeats.shutdownNow();
  }

  private void stop(Collection<GuardedSubscription> all, Duration grace) {
    int running = 0;
    for (GuardedSubscription s : all) {
      running += s.receiver().beginStop();
      s.subscriber().ifPresent(Subscriber::stopAsync);
    }
    int nacked = 0;
    for (GuardedSubscription s : all) {
      nacked += s.receiver().nackWaiting();
    }
    long graceEnds = System.nanoTime() + grace.toNanos();
    boolean interrupted = false;
    for (GuardedSubscription s : all) {
      try {
        s.receiver().awaitIdle(Duration.ofNanos(Math.max(0, graceEnds - System.nanoTime())));
      } catch (InterruptedException e) {
        interrupted = true;
        break;
      }
    }
    long releaseEnds = System.nanoTime() + RELEASE_BUDGET.toNanos();
    int abandoned = 0;
    int released = 0;
    for (GuardedSubscription s : all) {
      if (s.receiver().running() > 0) {
        GuardedReceiver.Abandoned a =
            s.receiver()
                .abandonRunning(Duration.ofNanos(Math.max(1, releaseEnds - System.nanoTime())));
        abandoned += a.handlers();
        released += a.claimsReleased();
      }
    }
    long flushEnds = System.nanoTime() + FLUSH_BUDGET.toNanos();
    for (GuardedSubscription s : all) {
      Optional<Subscriber> subscriber = s.subscriber();
      if (subscriber.isPresent()) {
        try {
          subscriber
              .get()
              .awaitTerminated(Math.max(0, flushEnds - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException | IllegalStateException e) {
          log.warn("the subscriber of {} did not stop cleanly: {}", s.id(), e.toString());
        }
      }
      s.receiver().close();
    }
    wiring.deadLetters().shutdown(Duration.ofNanos(Math.max(0, flushEnds - System.nanoTime())));
    log.info(
        "guarded subscriptions stopped: {} handler(s) were running at the stop, {} abandoned"
            + " (interrupted, nacked; {} claim(s) released); {} waiting delivery(ies) nacked"
            + " unrun",
        running,
        abandoned,
        released,
        nacked);
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** Checks that a dead-letter topic exists; throws if it does not. */
  @FunctionalInterface
  interface TopicCheck {
    /**
     * Checks {@code topic}.
     *
     * @param topic the topic
     * @param property the setting that names it, for the error
     * @throws IllegalStateException if the topic does not exist
     */
    void check(TopicName topic, String property);
  }

  /**
   * What the subscriptions are wired to besides the settings and the store.
   *
   * @param projectId Spring Cloud GCP's project, for short subscription and topic names
   * @param subscriber what {@link #subscribe} subscribes with, if there is one
   * @param deadLetters the dead-letter publishers
   * @param topicCheck checks each dead-letter topic at the start
   * @param maxAckExtensionSeconds a subscription's max-ack-extension-period in seconds (name,
   *     project), or null for the client's default
   * @param shutdownPhaseTimeout {@code spring.lifecycle.timeout-per-shutdown-phase}
   * @param receiverCustomizers applied to every receiver's builder, in order (the metrics' among
   *     them)
   * @param guardCustomizers applied to every guard's builder, in order (the metrics' and the health
   *     indicator's among them)
   * @param classLoader loads the poison exceptions
   */
  record Wiring(
      String projectId,
      @Nullable PubSubSubscriberOperations subscriber,
      DeadLetterTopics deadLetters,
      TopicCheck topicCheck,
      BiFunction<String, String, @Nullable Long> maxAckExtensionSeconds,
      Duration shutdownPhaseTimeout,
      List<GuardedReceiverCustomizer> receiverCustomizers,
      List<IdempotencyGuardCustomizer> guardCustomizers,
      @Nullable ClassLoader classLoader) {}
}
