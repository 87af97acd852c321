/**
 * Exactly-once processing for any google-cloud-pubsub {@code Subscriber}: {@link
 * dev.pubsubworker.pubsub.GuardedReceiver} is a {@code MessageReceiverWithAckResponse} (and, via
 * {@link dev.pubsubworker.pubsub.GuardedReceiver#asMessageReceiver()}, a plain {@code
 * MessageReceiver}) that runs each message's {@link dev.pubsubworker.api.MessageHandler} under an
 * {@link dev.pubsubworker.core.IdempotencyGuard} and settles the delivery by the outcome table in
 * its documentation: parking of held keys, per-key lines, dead-lettering of terminal failures,
 * ack-response checks and a graceful stop.
 *
 * <ul>
 *   <li>{@link dev.pubsubworker.pubsub.GuardedReceiver} and its builder: the engine.
 *   <li>{@link dev.pubsubworker.pubsub.MessageKey}: what a message's idempotency key is.
 *   <li>{@link dev.pubsubworker.pubsub.GuardMode}, {@link
 *       dev.pubsubworker.pubsub.TerminalFailures}, {@link
 *       dev.pubsubworker.pubsub.DeadLetterPublisher}: how it runs and fails.
 *   <li>{@link dev.pubsubworker.pubsub.Outcome}, {@link dev.pubsubworker.pubsub.ReceiverListener},
 *       {@link dev.pubsubworker.pubsub.DeliveryObserver}, {@link dev.pubsubworker.pubsub.MdcKeys}:
 *       what it tells the world; {@code dev.pubsubworker.pubsub.micrometer} binds it to Micrometer.
 * </ul>
 *
 * Dependencies: worker-core, the handler types of worker-api, google-cloud-pubsub and the SLF4J
 * API; no Guice, no Typesafe Config, no logging binding.
 */
@NullMarked
package dev.pubsubworker.pubsub;

import org.jspecify.annotations.NullMarked;
