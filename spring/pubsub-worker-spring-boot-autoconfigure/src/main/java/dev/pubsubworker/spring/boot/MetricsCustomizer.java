package dev.pubsubworker.spring.boot;

import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.pubsub.GuardedReceiver;
import dev.pubsubworker.pubsub.micrometer.ReceiverMetrics;

/**
 * Attaches {@link ReceiverMetrics} to every receiver and, under its subscription, to every guard;
 * Boot binds the metrics (a {@code MeterBinder} bean) to its {@code MeterRegistry}. Loaded only
 * with Micrometer on the class path.
 */
final class MetricsCustomizer implements GuardedReceiverCustomizer, IdempotencyGuardCustomizer {

  private final ReceiverMetrics metrics;

  MetricsCustomizer(ReceiverMetrics metrics) {
    this.metrics = metrics;
  }

  @Override
  public void customize(String id, GuardedReceiver.Builder builder) {
    builder.listener(metrics);
  }

  @Override
  public void customize(String id, IdempotencyGuard.Builder builder) {
    builder.listener(metrics.guardListener(id));
  }
}
