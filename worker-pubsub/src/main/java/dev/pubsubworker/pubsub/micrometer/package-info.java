/**
 * Micrometer metrics of {@link dev.pubsubworker.pubsub.GuardedReceiver}s and their guards: {@link
 * dev.pubsubworker.pubsub.micrometer.ReceiverMetrics}, a {@code MeterBinder}, with every name in
 * {@link dev.pubsubworker.pubsub.micrometer.ReceiverMetricNames}. Needs {@code
 * io.micrometer:micrometer-core} on the class path (an optional dependency of this module).
 */
@NullMarked
package dev.pubsubworker.pubsub.micrometer;

import org.jspecify.annotations.NullMarked;
