package dev.pubsubworker.runtime.pubsub;

import com.google.api.core.InternalApi;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.core.DurationText;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.pubsub.GuardedReceiver;
import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.pubsub.TerminalFailures;
import dev.pubsubworker.runtime.config.SubscriptionConfig;
import dev.pubsubworker.runtime.config.WorkerConfig;
import io.opentelemetry.api.OpenTelemetry;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every subscription of a worker, pulling: started together (all or none) and stopped together
 * gracefully.
 *
 * <p>A graceful {@link #stop}: deliveries that have not started never run, running handlers get the
 * grace, and what still runs at the grace is abandoned. Each subscription's {@link GuardedReceiver}
 * does the steps; this class orders them across the subscriptions:
 *
 * <ol>
 *   <li>From its first instant no delivery starts: the receivers nack every delivery that reaches
 *       them afterwards without running anything ({@link Outcome#REFUSED_AT_SHUTDOWN}).
 *   <li>Pulling stops (the streams are closed), and the deliveries that have not started are nacked
 *       at once: those parked or queued locally behind their key, and those waiting for a handler
 *       thread (on the stopping thread).
 *   <li>The handlers already running get the grace period.
 *   <li>At the grace, every handler still running is abandoned: its claim is released through
 *       {@link IdempotencyGuard#abandon} (the key is reclaimable at once and the claim can never
 *       complete), its thread interrupted, its message nacked ({@link Outcome#ABANDONED}). The
 *       releases get at most {@link #RELEASE_BUDGET}; a claim not released by then lapses with its
 *       lease.
 *   <li>The subscribers flush the nacks and terminate, and the dead-letter publishers flush and
 *       stop, within {@link #TERMINATION_BUDGET} in all.
 * </ol>
 *
 * So {@link #stop} returns within grace + {@link #RELEASE_BUDGET} + {@link #TERMINATION_BUDGET}.
 * The client library's own shutdown timeout is set past that, so it never cuts a handler off. A
 * handler that ignores the interrupt and still returns is fenced out at DONE (logged); that window
 * closes when the process exits right after the stop.
 */
@InternalApi("the worker's running subscribers")
public final class SubscriptionSet {

  /** The most the abandoned claims' releases may take after the grace. */
  public static final Duration RELEASE_BUDGET = Duration.ofSeconds(5);

  /** The most the subscribers may take to flush their nacks and terminate after that. */
  public static final Duration TERMINATION_BUDGET = Duration.ofSeconds(5);

  private static final Logger log = LoggerFactory.getLogger(SubscriptionSet.class);
  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

  /**
   * What a stop did, counted as it happened.
   *
   * @param runningAtStop deliveries in progress when the stop began: the only ones that ran (or
   *     went on running) after it
   * @param finishedInGrace of those, the ones that ended on their own within the grace
   * @param abandoned of those, the ones still running at the grace: interrupted and nacked
   * @param released of the abandoned, those whose claim this stop released (the others had no claim
   *     yet, ran unguarded, ended on their own meanwhile, or their release failed or ran out of
   *     time)
   * @param refused deliveries nacked without running: those that arrived after the stop began, and
   *     those parked or queued locally behind their key when it began
   */
  public record StopSummary(
      int runningAtStop, int finishedInGrace, int abandoned, int released, int refused) {}

  private final List<SubscriptionRunner> runners;
  private final List<GuardedReceiver> receivers;
  private final ScheduledThreadPoolExecutor parkTimer;
  private final DeadLetterPublishers deadLetterPublishers;

  private SubscriptionSet(
      List<SubscriptionRunner> runners,
      List<GuardedReceiver> receivers,
      ScheduledThreadPoolExecutor parkTimer,
      DeadLetterPublishers deadLetterPublishers) {
    this.runners = runners;
    this.receivers = receivers;
    this.parkTimer = parkTimer;
    this.deadLetterPublishers = deadLetterPublishers;
  }

  /**
   * Reads every subscription (so a missing one stops the start before anything pulls), then starts
   * one subscriber per subscription.
   *
   * @param config the worker's settings
   * @param handlers the handlers by name; every subscription's handler must be among them
   * @param guards each subscription's guard, by subscription id; every subscription's must be there
   *     (its key log format is how the receiver logs keys too)
   * @param listeners observe the receivers' outcomes (metrics, tracing)
   * @param connection the Pub/Sub connection
   * @param streams told each subscription's path, so its stream failures carry the subscription's
   *     id
   * @param terminalFailures each subscription's terminal failures ({@link
   *     PoisonExceptions#resolve}), by subscription id; a subscription missing here has only {@link
   *     TerminalFailures#poisonOnly()}
   * @param onFailure called when a subscriber fails while running
   * @param aborted asked before each subscription is read and before each subscriber starts: true
   *     once the start is to end without pulling (a stop during start-up)
   * @throws SubscriptionUnavailableException if a subscription or its dead-letter topic is missing,
   *     or a subscription will not start; the ones already started are stopped
   * @throws java.util.concurrent.CancellationException if {@code aborted} turned true; the ones
   *     already started are stopped
   */
  public static SubscriptionSet start(
      WorkerConfig config,
      Map<String, MessageHandler> handlers,
      Map<String, IdempotencyGuard> guards,
      List<DispatchListener> listeners,
      PubSubConnection connection,
      StreamHealth streams,
      Map<String, TerminalFailures> terminalFailures,
      Consumer<Throwable> onFailure,
      BooleanSupplier aborted) {
    List<SubscriptionConfig> subs = config.orderedSubscriptions();
    List<SubscriptionFacts> facts = new ArrayList<>();
    Map<String, SubscriptionFacts> redriveFacts = new HashMap<>();
    for (SubscriptionConfig s : subs) {
      checkNotAborted(aborted);
      SubscriptionFacts f = SubscriptionProbe.read(connection, config.projectId(), s);
      streams.register(f.path(), s.id());
      facts.add(f);
      if (s.failures().redriveSubscription().isPresent()) {
        // Read as the subscription's own settings would read it: a missing one stops the start.
        SubscriptionConfig redrive =
            new SubscriptionConfig(
                s.id(),
                s.failures().redriveSubscription().get(),
                s.handler(),
                s.guard(),
                s.client(),
                s.failures());
        SubscriptionFacts r = SubscriptionProbe.read(connection, config.projectId(), redrive);
        streams.register(r.path(), s.id());
        redriveFacts.put(s.id(), r);
      }
    }
    List<Optional<String>> deadLetterTopics =
        DeadLetterPolicyCheck.withTopicLookup(
            connection,
            topics -> {
              List<Optional<String>> found = new ArrayList<>();
              for (int i = 0; i < subs.size(); i++) {
                found.add(DeadLetterPolicyCheck.check(config, subs.get(i), facts.get(i), topics));
              }
              return found;
            });
    Optional<OpenTelemetry> clientTracing = ClientTracing.find(listeners);
    DeadLetterPublishers publishers = new DeadLetterPublishers(connection, clientTracing);
    List<SubscriptionRunner> runners = new ArrayList<>();
    List<GuardedReceiver> receivers = new ArrayList<>();
    // Parked deliveries' retries: this thread only hands them to the subscription's handler
    // threads.
    ScheduledThreadPoolExecutor parkTimer =
        new ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, "pubsub-worker-park-timer");
              t.setDaemon(true);
              return t;
            });
    parkTimer.setRemoveOnCancelPolicy(true);
    // Past everything stop() does, so the client never nacks a delivery we have not settled.
    Duration shutdownTimeout =
        config.shutdownGrace().plus(RELEASE_BUDGET).plus(TERMINATION_BUDGET).plusSeconds(5);
    for (int i = 0; i < subs.size(); i++) {
      SubscriptionConfig s = subs.get(i);
      HandlerPools handlerThreads =
          new HandlerPools(s.client().executorThreads(), "handler-" + s.id() + "-");
      GuardedReceiver receiver =
          SubscriptionReceivers.build(
              s,
              facts.get(i),
              handlers.get(s.handler()),
              guards.get(s.id()),
              listeners,
              terminalFailures.getOrDefault(s.id(), TerminalFailures.poisonOnly()),
              deadLetterTopics.get(i).map(publishers::forTopic),
              config.workerId(),
              parkTimer,
              handlerThreads);
      receivers.add(receiver);
      runners.add(
          new SubscriptionRunner(
              s,
              facts.get(i),
              receiver,
              handlerThreads,
              connection,
              clientTracing,
              shutdownTimeout,
              onFailure));
      SubscriptionFacts r = redriveFacts.get(s.id());
      if (r != null) {
        RedriveReceiver redrive =
            new RedriveReceiver(
                receiver, s.id(), facts.get(i).path(), r.path(), config.projectId());
        runners.add(
            new SubscriptionRunner(
                s,
                r,
                redrive,
                redrive.asMessageReceiver(),
                new HandlerPools(s.client().executorThreads(), "handler-" + s.id() + "-redrive-"),
                connection,
                clientTracing,
                shutdownTimeout,
                onFailure));
      }
    }
    SubscriptionSet set = new SubscriptionSet(runners, receivers, parkTimer, publishers);
    try {
      for (SubscriptionRunner r : runners) {
        checkNotAborted(aborted);
        r.start(START_TIMEOUT);
      }
    } catch (RuntimeException e) {
      set.stop(Duration.ZERO);
      throw e;
    }
    return set;
  }

  private static void checkNotAborted(BooleanSupplier aborted) {
    if (aborted.getAsBoolean()) {
      throw new CancellationException("the start was stopped before every subscriber pulled");
    }
  }

  /** Whether every subscriber is running. */
  public boolean allRunning() {
    return runners.stream().allMatch(SubscriptionRunner::isRunning);
  }

  /** What was learned about each subscription, in config order. */
  public List<SubscriptionFacts> facts() {
    return runners.stream().map(SubscriptionRunner::facts).toList();
  }

  /** How many deliveries wait right now: parked, or queued locally behind their key. */
  public int parked() {
    return receivers.stream().mapToInt(GuardedReceiver::waiting).sum();
  }

  /** How many deliveries are being handled right now. */
  public int inFlight() {
    return receivers.stream().mapToInt(GuardedReceiver::running).sum();
  }

  /**
   * The delivery in progress on a handler thread the longest (its claim, handler and DONE; a parked
   * delivery holds no thread and is not counted), of any subscription.
   */
  public Optional<RunningHandler> oldestHandler() {
    return receivers.stream()
        .map(SubscriptionSet::oldestOf)
        .flatMap(Optional::stream)
        .max(Comparator.comparing(RunningHandler::age));
  }

  /** How long subscription {@code id}'s oldest delivery in progress has been running, if any. */
  public Optional<Duration> oldestHandlerAge(String id) {
    return receivers.stream()
        .filter(r -> r.subscription().equals(id))
        .findFirst()
        .flatMap(SubscriptionSet::oldestOf)
        .map(RunningHandler::age);
  }

  private static Duration max(Duration a, Duration b) {
    return a.compareTo(b) >= 0 ? a : b;
  }

  private static Optional<RunningHandler> oldestOf(GuardedReceiver receiver) {
    return receiver
        .oldestRunning()
        .map(
            d ->
                new RunningHandler(
                    receiver.subscription(),
                    d.thread(),
                    // The runtime's receivers run on the system clock.
                    max(Duration.between(d.since(), Instant.now()), Duration.ZERO)));
  }

  /**
   * Stops gracefully, as the class describes: no delivery starts from now on, pulling stops, the
   * running handlers get {@code grace}, the rest are abandoned (claim released, interrupted,
   * nacked), and the subscribers terminate. Call it once.
   *
   * @return what happened, counted
   */
  public StopSummary stop(Duration grace) {
    long graceEnds = System.nanoTime() + grace.toNanos();
    int runningAtStop = 0;
    for (GuardedReceiver r : receivers) {
      runningAtStop += r.beginStop();
    }
    // Close the streams first, so the deliveries nacked next are not redelivered to this worker.
    runners.forEach(SubscriptionRunner::stopAsync);
    // Parked and locally queued deliveries have not started: nacked now, they never run (a retry
    // that comes due meanwhile finds the stop begun and is nacked unrun as well).
    int releasedWaiting = 0;
    for (GuardedReceiver r : receivers) {
      releasedWaiting += r.nackWaiting();
    }
    for (SubscriptionRunner r : runners) {
      r.flushQueued();
    }
    boolean drained = true;
    try {
      for (GuardedReceiver r : receivers) {
        drained &= r.awaitIdle(Duration.ofNanos(Math.max(0, graceEnds - System.nanoTime())));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      drained = false;
    }
    int abandoned = 0;
    int released = 0;
    if (!drained) {
      // One release budget for all the subscriptions' abandoned claims.
      long releaseEnds = System.nanoTime() + RELEASE_BUDGET.toNanos();
      for (GuardedReceiver r : receivers) {
        GuardedReceiver.Abandoned a =
            r.abandonRunning(Duration.ofNanos(Math.max(0, releaseEnds - System.nanoTime())));
        abandoned += a.handlers();
        released += a.claimsReleased();
      }
    }
    long terminationEnds = System.nanoTime() + TERMINATION_BUDGET.toNanos();
    for (SubscriptionRunner r : runners) {
      Duration left = Duration.ofNanos(Math.max(0, terminationEnds - System.nanoTime()));
      if (!r.awaitTerminated(left)) {
        log.warn(
            "subscriber of {} did not stop within {} of the grace",
            r.config().id(),
            DurationText.of(TERMINATION_BUDGET));
      }
    }
    parkTimer.shutdownNow();
    // After the handlers: an abandoned one may still be publishing, and fails harmlessly (nacked).
    deadLetterPublishers.shutdown(
        Duration.ofNanos(Math.max(0, terminationEnds - System.nanoTime())));
    int refused = releasedWaiting;
    for (GuardedReceiver r : receivers) {
      refused += r.refusedSinceStop();
    }
    return new StopSummary(runningAtStop, runningAtStop - abandoned, abandoned, released, refused);
  }
}
