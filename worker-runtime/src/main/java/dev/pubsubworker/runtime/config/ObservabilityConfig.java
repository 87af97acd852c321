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
 * @param tracing the OpenTelemetry tracing of deliveries
 */
public record ObservabilityConfig(
    int httpPort,
    String httpHost,
    Duration lockStoreProbeInterval,
    Duration lockStoreStaleAfter,
    Duration lockStoreStuckAfter,
    TracingConfig tracing) {}
