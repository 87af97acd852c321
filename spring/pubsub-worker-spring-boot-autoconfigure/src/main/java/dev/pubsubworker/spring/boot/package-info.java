/**
 * Exactly-once processing for Spring Boot applications on Spring Cloud GCP's Pub/Sub: the
 * auto-configuration of a lock store from {@code pubsub-worker.*} properties ({@link
 * dev.pubsubworker.spring.boot.PubSubWorkerProperties}), guarded consumers on the {@code
 * worker-pubsub} engine for {@code PubSubTemplate.subscribe} ({@link
 * dev.pubsubworker.spring.boot.GuardedPubSubConsumer}, {@link
 * dev.pubsubworker.spring.boot.GuardedSubscriptions#subscribe}) and for the inbound channel adapter
 * ({@link dev.pubsubworker.spring.boot.GuardedPubSubMessageHandler}), a health indicator ({@link
 * dev.pubsubworker.spring.boot.PubSubWorkerHealthIndicator}) and Micrometer metrics.
 */
@NullMarked
package dev.pubsubworker.spring.boot;

import org.jspecify.annotations.NullMarked;
