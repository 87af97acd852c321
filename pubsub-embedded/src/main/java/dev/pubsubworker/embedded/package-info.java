/**
 * An in-process Google Cloud Pub/Sub server for tests, demos and scripts: {@link
 * dev.pubsubworker.embedded.EmbeddedPubSub} (the server), {@link dev.pubsubworker.embedded.Faults}
 * (fault injection), {@link dev.pubsubworker.embedded.EmbeddedPubSubTest} / {@link
 * dev.pubsubworker.embedded.EmbeddedPubSubExtension} (JUnit 5) and {@link
 * dev.pubsubworker.embedded.EmbeddedPubSubMain} (the standalone process). Everything else is
 * package-private machinery.
 */
package dev.pubsubworker.embedded;
