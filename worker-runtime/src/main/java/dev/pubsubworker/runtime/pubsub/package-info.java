/**
 * Pub/Sub plumbing: the client connection (emulator or Application Default Credentials), what a
 * subscription's settings say (exactly-once, dead-letter policy), one streaming-pull {@code
 * Subscriber} per subscription feeding the engine's {@code GuardedReceiver} (module worker-pubsub),
 * built from the subscription's settings, which runs each message's handler under its guard and
 * maps the outcome to ack or nack; the graceful stop across the subscriptions.
 */
package dev.pubsubworker.runtime.pubsub;
