package dev.pubsubworker.runtime.pubsub;

import com.google.api.core.InternalApi;
import io.opentelemetry.api.OpenTelemetry;
import java.util.List;
import java.util.Optional;

/**
 * A dispatch listener that also turns on the google-cloud-pubsub client's own OpenTelemetry
 * tracing: the worker's subscribers and dead-letter publishers are built with {@link
 * #clientOpenTelemetry()} (and {@code setEnableOpenTelemetryTracing(true)}) when it is present. At
 * most one listener of a worker should offer it; the first one found is used.
 */
@InternalApi("the client tracing behind Observability's Tracing")
public interface ClientTracing {

  /** The OpenTelemetry the client library traces with; empty when tracing is off. */
  Optional<OpenTelemetry> clientOpenTelemetry();

  /** The first client tracing among {@code listeners} that is on, or empty. */
  static Optional<OpenTelemetry> find(List<? extends DispatchListener> listeners) {
    for (DispatchListener l : listeners) {
      if (l instanceof ClientTracing t) {
        Optional<OpenTelemetry> otel = t.clientOpenTelemetry();
        if (otel.isPresent()) {
          return otel;
        }
      }
    }
    return Optional.empty();
  }
}
