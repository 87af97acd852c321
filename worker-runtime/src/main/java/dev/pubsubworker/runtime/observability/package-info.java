/**
 * Operating the worker: Micrometer metrics ({@link
 * dev.pubsubworker.runtime.observability.WorkerMetrics}, every name in {@link
 * dev.pubsubworker.runtime.observability.MetricNames}), the HTTP server with {@code /metrics},
 * {@code /healthz} and {@code /readyz} ({@link
 * dev.pubsubworker.runtime.observability.Observability}), and log lines that Google Cloud Logging
 * parses ({@link dev.pubsubworker.runtime.observability.JsonLogLayout}, switched by {@link
 * dev.pubsubworker.runtime.observability.LogFormats}).
 */
package dev.pubsubworker.runtime.observability;
