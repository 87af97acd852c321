package dev.pubsubworker.runtime.config;

import java.net.URI;

/**
 * {@code pubsub-worker.observability.tracing}: OpenTelemetry spans of each delivery.
 *
 * @param exporter where spans go; {@link Exporter#NONE} exports nothing, but log lines still carry
 *     the trace id a traced publisher put on the message
 * @param otlpEndpoint the OTLP/HTTP traces endpoint, used with {@link Exporter#OTLP}
 * @param sampleRatio the share of new traces that are sampled, 0.0 to 1.0; a message whose
 *     publisher decided already keeps that decision (parent-based sampling)
 * @param serviceName the {@code service.name} resource attribute of the spans
 */
public record TracingConfig(
    Exporter exporter, URI otlpEndpoint, double sampleRatio, String serviceName) {

  /** The span exporters the worker can use. */
  public enum Exporter {
    /** No spans leave the process. */
    NONE,
    /** OTLP over HTTP/protobuf, batched. */
    OTLP
  }

  /** Tracing off: no exporter, the defaults for the rest. */
  public static TracingConfig off() {
    return new TracingConfig(
        Exporter.NONE, URI.create("http://localhost:4318/v1/traces"), 1.0, "pubsub-worker");
  }
}
