package dev.pubsubworker.runtime.pubsub;

import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.pubsub.DeadLetterAttributes;
import dev.pubsubworker.pubsub.DeadLetterPublisher;
import dev.pubsubworker.pubsub.GuardMode;
import dev.pubsubworker.pubsub.GuardedReceiver;
import dev.pubsubworker.pubsub.MessageKey;
import dev.pubsubworker.pubsub.TerminalFailures;
import dev.pubsubworker.runtime.config.KeySpec;
import dev.pubsubworker.runtime.config.SubscriptionConfig;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The engine's receiver for one configured subscription: its settings as {@link GuardedReceiver}'s
 * builder calls. What the guard does per claim (lease, ttl, heartbeat, interrupt, fingerprint
 * policy, transactional) is the guard's own, built once; a claim adds only the payload's
 * fingerprint. Keys are stored under the subscription's namespace, so a message on one subscription
 * can neither claim nor be suppressed by another namespace's key.
 */
final class SubscriptionReceivers {

  private SubscriptionReceivers() {}

  /**
   * @param s the subscription's settings
   * @param facts what was read about it at start-up (its path, message ordering)
   * @param handler its handler
   * @param guard its guard, built from {@code s.guard()} ({@code SubscriptionGuards}): lease, ttl,
   *     heartbeat and the rest are the guard's own, so no claim overrides them
   * @param listeners the worker's listeners (metrics, tracing, tests)
   * @param terminal its terminal failures ({@link PoisonExceptions})
   * @param deadLetters where its terminal failures go, if anywhere
   * @param workerId the configured {@code worker-id}; empty for the host's name
   * @param parkTimer the worker's timer of parked retries
   * @param handlerThreads the subscription's handler threads, which run the retries
   */
  static GuardedReceiver build(
      SubscriptionConfig s,
      SubscriptionFacts facts,
      MessageHandler handler,
      IdempotencyGuard guard,
      List<DispatchListener> listeners,
      TerminalFailures terminal,
      Optional<DeadLetterPublisher> deadLetters,
      String workerId,
      ScheduledExecutorService parkTimer,
      Executor handlerThreads) {
    GuardedReceiver.Builder b =
        GuardedReceiver.newBuilder(s.id(), handler)
            .guard(guard)
            .mode(
                switch (s.guard().mode()) {
                  case LOCK -> GuardMode.LOCK;
                  case MUTEX -> GuardMode.MUTEX;
                  case NONE -> GuardMode.NONE;
                })
            .key(key(s))
            .fingerprint(s.guard().fingerprint())
            .allowUnguarded(s.guard().allowUnguarded())
            .terminalFailures(terminal)
            .subscriptionPath(facts.path())
            .handlerName(s.handler())
            .inProgressMaxWait(s.failures().inProgressMaxWait())
            .timer(parkTimer)
            .handlerExecutor(handlerThreads)
            .messageOrdering(facts.messageOrdering());
    deadLetters.ifPresent(b::deadLetters);
    if (!workerId.isEmpty()) {
      b.workerId(workerId);
    }
    listeners.forEach(b::listener);
    return b.build();
  }

  /** The subscription's key, stored under its namespace ({@link SubscriptionConfig#storedKey}). */
  static MessageKey key(SubscriptionConfig s) {
    KeySpec spec = s.guard().key();
    return MessageKey.of(
        spec.text(),
        m ->
            spec.resolve(DeadLetterAttributes.keyMessageId(m), m.attributes(), m.orderingKey())
                .map(s::storedKey));
  }
}
