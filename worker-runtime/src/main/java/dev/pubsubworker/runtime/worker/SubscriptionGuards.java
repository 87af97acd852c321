package dev.pubsubworker.runtime.worker;

import dev.pubsubworker.core.GuardListener;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.runtime.config.SubscriptionConfig;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * One guard per subscription, all on one lock store and one heartbeat scheduler, each observed by
 * the listeners given for its subscription. Closing stops the shared scheduler; the lock store
 * stays open (the injector's resources own it).
 */
final class SubscriptionGuards implements AutoCloseable {

  private final Map<String, IdempotencyGuard> bySubscription;
  private final ScheduledExecutorService heartbeats;

  private SubscriptionGuards(
      Map<String, IdempotencyGuard> bySubscription, ScheduledExecutorService heartbeats) {
    this.bySubscription = bySubscription;
    this.heartbeats = heartbeats;
  }

  /**
   * Builds each subscription's guard on {@code backend}, once, from its {@link
   * SubscriptionConfig.GuardPolicy}: lease, ttl, heartbeat, interrupt on lease loss, fingerprint
   * policy and transactional become the guard's own defaults, so a delivery passes per call only
   * what varies per message (its payload's fingerprint).
   *
   * @param listeners the listeners of one subscription's guard, by subscription id
   * @param keyLogFormat how the guards write keys in log lines
   * @throws IllegalArgumentException if a subscription is transactional and {@code backend} is not
   *     a {@code TransactionalLockBackend} (the config's own check refuses that earlier)
   */
  static SubscriptionGuards create(
      List<SubscriptionConfig> subscriptions,
      LockBackend backend,
      Function<String, List<GuardListener>> listeners,
      UnaryOperator<String> keyLogFormat) {
    ScheduledExecutorService heartbeats = newHeartbeatScheduler();
    Map<String, IdempotencyGuard> guards = new LinkedHashMap<>();
    for (SubscriptionConfig s : subscriptions) {
      SubscriptionConfig.GuardPolicy p = s.guard();
      IdempotencyGuard.Builder b =
          IdempotencyGuard.newBuilder(backend)
              .lease(p.lease())
              .ttl(p.ttl())
              .heartbeat(p.heartbeat())
              .interruptOnLeaseLoss(p.interruptOnLeaseLoss())
              .fingerprintPolicy(p.fingerprintMismatch())
              .transactional(p.transactional())
              .keyLogFormat(keyLogFormat)
              .heartbeatScheduler(heartbeats);
      listeners.apply(s.id()).forEach(b::listener);
      guards.put(s.id(), b.build());
    }
    return new SubscriptionGuards(Map.copyOf(guards), heartbeats);
  }

  /** Each subscription's guard, by subscription id. */
  Map<String, IdempotencyGuard> bySubscription() {
    return bySubscription;
  }

  /** Stops the shared heartbeat scheduler (the guards' own close leaves a given one running). */
  @Override
  public void close() {
    heartbeats.shutdownNow();
  }

  /** Like the guard's own: two daemon threads, cancelled heartbeats removed at once. */
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
}
