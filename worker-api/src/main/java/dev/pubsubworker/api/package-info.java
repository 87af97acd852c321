/**
 * The plugin API of the worker: what a handler plugin implements and sees.
 *
 * <ul>
 *   <li>{@link dev.pubsubworker.api.WorkerPlugin}: found with {@link java.util.ServiceLoader};
 *       gives a Guice module for its own config subtree.
 *   <li>{@link dev.pubsubworker.api.Handlers#bind}: contributes a named {@link
 *       dev.pubsubworker.api.MessageHandler} from that module.
 *   <li>{@link dev.pubsubworker.api.InboundMessage} and {@link
 *       dev.pubsubworker.api.HandlerContext}: what a handler receives.
 * </ul>
 *
 * Plugins compile against this module alone (scope {@code provided}); the runtime ({@code
 * worker-runtime}) supplies it, with Guice and Typesafe Config, at run time.
 *
 * <p>Only {@code WorkerPlugin} and {@code Handlers} need Guice and Typesafe Config. The handler
 * types ({@code MessageHandler}, {@code InboundMessage}, {@code HandlerContext}, {@code
 * PoisonMessageException}) need neither, and {@code worker-pubsub} (the engine for any {@code
 * Subscriber}) depends on this module with both excluded, so its users get the handler types
 * without them. Guice and Config stay ordinary dependencies here, so that a plugin author still
 * needs this one dependency and nothing else.
 */
@NullMarked
package dev.pubsubworker.api;

import org.jspecify.annotations.NullMarked;
