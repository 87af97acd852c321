package dev.pubsubworker.spring.boot;

import dev.pubsubworker.pubsub.GuardedReceiver;

/**
 * Changes a receiver's builder after {@link GuardedSubscriptions} applied the {@code
 * pubsub-worker.subscriptions.<id>} settings and before it builds the receiver: for what the
 * settings do not say, such as a key computed in code ({@code builder.key(MessageKey.of(...)
 * .withNamespace(id))}), terminal failure classes, a handler executor, or a {@code
 * ReceiverListener} of your own. Every bean of this type is applied, in {@code @Order}.
 */
@FunctionalInterface
public interface GuardedReceiverCustomizer {

  /**
   * Changes {@code builder}.
   *
   * @param id the subscription's id (its entry under {@code pubsub-worker.subscriptions})
   * @param builder the receiver's builder, the settings applied
   */
  void customize(String id, GuardedReceiver.Builder builder);
}
