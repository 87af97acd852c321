/**
 * Pub/Sub plumbing: the client connection (emulator or Application Default Credentials), what a
 * subscription's settings say (exactly-once, dead-letter policy), one streaming-pull {@code
 * Subscriber} per subscription, and the dispatcher that runs each message's handler under its guard
 * and maps the outcome to ack or nack.
 */
package dev.pubsubworker.runtime.pubsub;
