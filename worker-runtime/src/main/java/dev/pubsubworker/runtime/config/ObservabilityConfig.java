package dev.pubsubworker.runtime.config;

import java.time.Duration;

/**
 * {@code pubsub-worker.observability}: the HTTP server for metrics and health.
 *
 * @param httpPort the port of /metrics, /healthz and /readyz; 0 turns the server off
 * @param httpHost the address it binds to
 * @param lockStoreProbeInterval how often readiness reads the lock store
 * @param lockStoreStaleAfter how long without an answer from the lock store makes /readyz fail
 * @param lockStoreStuckAfter how long one lock-store call may be in progress before /healthz fails
 * @param handlerStuckAfter how long one delivery may be in progress on a handler thread before
 *     /healthz fails; {@link Duration#ZERO} when that check is off (the default)
 * @param pubsubStreamSettleTime how long a Pub/Sub stream failure may last before /readyz reports
 *     it, and how long a started stream the server has not answered must stay open to count as up
 * @param tracing the OpenTelemetry tracing of deliveries
 */
public record ObservabilityConfig(
    int httpPort,
    String httpHost,
    Duration lockStoreProbeInterval,
    Duration lockStoreStaleAfter,
    Duration lockStoreStuckAfter,
    Duration handlerStuckAfter,
    Duration pubsubStreamSettleTime,
    TracingConfig tracing) {

  /** Whether /healthz watches the age of the oldest running handler. */
  public boolean handlerStuckCheck() {
    return !handlerStuckAfter.isZero();
  }
}
