package dev.pubsubworker.spring.boot;

import dev.pubsubworker.core.IdempotencyGuard;

/**
 * Changes the builder of a subscription's guard after {@link GuardedSubscriptions} applied the
 * settings (lease, ttl, transactional, the metrics and health listeners, the shared heartbeat
 * scheduler) and before it builds the guard: for a fingerprint policy, a key log format, an
 * interrupt on lease loss. Every bean of this type is applied, in {@code @Order}.
 */
@FunctionalInterface
public interface IdempotencyGuardCustomizer {

  /**
   * Changes {@code builder}.
   *
   * @param id the subscription's id (its entry under {@code pubsub-worker.subscriptions})
   * @param builder the guard's builder, the settings applied
   */
  void customize(String id, IdempotencyGuard.Builder builder);
}
