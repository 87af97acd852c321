package dev.pubsubworker.runtime.pubsub;

import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.runtime.config.SubscriptionConfig;
import dev.pubsubworker.runtime.config.WorkerConfig;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every subscription of a worker, pulling: started together (all or none) and stopped together
 * gracefully.
 *
 * <p>A graceful {@link #stop} stops pulling at once, lets in-flight handlers finish within the
 * grace period, and then abandons those still running: their thread is interrupted, their claim
 * released (so a redelivery can run at once instead of waiting for the lease) and their message
 * nacked. A handler that ignores the interrupt and still finishes is then fenced out at complete
 * (logged); that window closes when the process exits right after the stop.
 */
public final class SubscriptionSet {

  private static final Logger log = LoggerFactory.getLogger(SubscriptionSet.class);
  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
  private static final Duration TERMINATION_TIMEOUT = Duration.ofSeconds(15);

  private final List<SubscriptionRunner> runners;
  private final InFlight inFlight;
  private final IdempotencyGuard guard;
  private final DispatchListener listener;

  private SubscriptionSet(
      List<SubscriptionRunner> runners,
      InFlight inFlight,
      IdempotencyGuard guard,
      DispatchListener listener) {
    this.runners = runners;
    this.inFlight = inFlight;
    this.guard = guard;
    this.listener = listener;
  }

  /**
   * Reads every subscription (so a missing one stops the start before anything pulls), then starts
   * one subscriber per subscription.
   *
   * @param config the worker's settings
   * @param handlers the handlers by name; every subscription's handler must be among them
   * @param guard the guard the handlers run under
   * @param listener observes dispatch outcomes
   * @param connection the Pub/Sub connection
   * @param keyLogFormat how keys appear in logs
   * @param onFailure called when a subscriber fails while running
   * @throws SubscriptionUnavailableException if a subscription is missing or will not start; the
   *     ones already started are stopped
   */
  public static SubscriptionSet start(
      WorkerConfig config,
      Map<String, MessageHandler> handlers,
      IdempotencyGuard guard,
      DispatchListener listener,
      PubSubConnection connection,
      UnaryOperator<String> keyLogFormat,
      Consumer<Throwable> onFailure) {
    List<SubscriptionConfig> subs = config.orderedSubscriptions();
    List<SubscriptionFacts> facts = new ArrayList<>();
    for (SubscriptionConfig s : subs) {
      SubscriptionFacts f = SubscriptionProbe.read(connection, config.projectId(), s);
      if (f.deadLetterTopic().isEmpty()) {
        log.warn(
            "subscription {} has no dead-letter policy: a message whose handler always throws is"
                + " redelivered forever. Add one, with max delivery attempts above the retries a"
                + " message can spend waiting for a held key",
            s.id());
      }
      facts.add(f);
    }
    InFlight inFlight = new InFlight();
    List<SubscriptionRunner> runners = new ArrayList<>();
    Duration shutdownTimeout = config.shutdownGrace().plus(TERMINATION_TIMEOUT);
    for (int i = 0; i < subs.size(); i++) {
      SubscriptionConfig s = subs.get(i);
      GuardedDispatcher dispatcher =
          new GuardedDispatcher(
              s, handlers.get(s.handler()), guard, listener, inFlight, keyLogFormat);
      runners.add(
          new SubscriptionRunner(
              s, facts.get(i), dispatcher, connection, shutdownTimeout, onFailure));
    }
    SubscriptionSet set = new SubscriptionSet(runners, inFlight, guard, listener);
    try {
      for (SubscriptionRunner r : runners) {
        r.start(START_TIMEOUT);
      }
    } catch (RuntimeException e) {
      set.stop(Duration.ZERO);
      throw e;
    }
    return set;
  }

  /** Whether every subscriber is running. */
  public boolean allRunning() {
    return runners.stream().allMatch(SubscriptionRunner::isRunning);
  }

  /** What was learned about each subscription, in config order. */
  public List<SubscriptionFacts> facts() {
    return runners.stream().map(SubscriptionRunner::facts).toList();
  }

  /** How many deliveries are being handled right now. */
  public int inFlight() {
    return inFlight.size();
  }

  /**
   * Stops gracefully: stop pulling, wait up to {@code grace} for in-flight handlers, abandon the
   * rest (interrupt, release claim, nack), and wait for the subscribers to terminate.
   *
   * @return how many deliveries were abandoned
   */
  public int stop(Duration grace) {
    runners.forEach(SubscriptionRunner::stopAsync);
    boolean drained;
    try {
      drained = inFlight.awaitEmpty(grace);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      drained = false;
    }
    int abandoned = drained ? 0 : abandonInFlight();
    for (SubscriptionRunner r : runners) {
      if (!r.awaitTerminated(TERMINATION_TIMEOUT)) {
        log.warn("subscriber of {} did not stop within {}", r.config().id(), TERMINATION_TIMEOUT);
      }
    }
    return abandoned;
  }

  private int abandonInFlight() {
    int abandoned = 0;
    for (InFlight.Entry e : inFlight.snapshot()) {
      if (!e.settle()) {
        continue;
      }
      abandoned++;
      e.thread.interrupt();
      String key = e.key;
      long fence = e.fence;
      if (key != null && fence > 0) {
        try {
          // release only checks the fence; the other fields of the claim do not matter to it.
          guard.backend().release(new Claim(key, fence, Instant.EPOCH, "released-at-shutdown"));
        } catch (RuntimeException failure) {
          log.warn("could not release an abandoned claim; it lapses with its lease", failure);
        }
      }
      e.reply.nack();
      listener.settled(e.subscription, Outcome.ABANDONED, Duration.ZERO);
      log.warn(
          "handler on subscription {} still running after the shutdown grace: interrupted, claim"
              + " released, message nacked",
          e.subscription);
    }
    return abandoned;
  }
}
