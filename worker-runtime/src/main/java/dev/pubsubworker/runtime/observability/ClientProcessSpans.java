package dev.pubsubworker.runtime.observability;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.logs.LoggerProvider;
import io.opentelemetry.api.metrics.MeterProvider;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.TracerBuilder;
import io.opentelemetry.api.trace.TracerProvider;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.trace.ReadableSpan;
import java.util.concurrent.TimeUnit;
import javax.annotation.Nullable;

/**
 * The OpenTelemetry handed to the google-cloud-pubsub client, which remembers, per thread, the last
 * {@code "<subscription> process"} span the client started.
 *
 * <p>Why: the client starts its process span on the handler thread right before it calls the {@code
 * MessageReceiver} (in {@code MessageDispatcher}'s delivery task), but it never makes that span
 * current and exposes it through no public API. The worker's receiver runs on that same thread and
 * asks {@link #takeProcessSpan} as its first step, so its own spans (claim, handle, complete, ...)
 * become children of the client's process span, on whichever thread they later run. Every other
 * span, and every call other than {@code spanBuilder}, goes to the delegate unchanged. Thread-safe.
 */
final class ClientProcessSpans implements OpenTelemetry {

  private static final String PROCESS_SUFFIX = " process";

  private final OpenTelemetry delegate;
  private final ThreadLocal<Span> lastProcess = new ThreadLocal<>();
  private final TracerProvider tracers;

  ClientProcessSpans(OpenTelemetry delegate) {
    this.delegate = delegate;
    TracerProvider provider = delegate.getTracerProvider();
    this.tracers =
        new TracerProvider() {
          @Override
          public Tracer get(String name) {
            return capturing(provider.get(name));
          }

          @Override
          public Tracer get(String name, String version) {
            return capturing(provider.get(name, version));
          }

          @Override
          public TracerBuilder tracerBuilder(String name) {
            TracerBuilder b = provider.tracerBuilder(name);
            return new TracerBuilder() {
              @Override
              public TracerBuilder setSchemaUrl(String schemaUrl) {
                b.setSchemaUrl(schemaUrl);
                return this;
              }

              @Override
              public TracerBuilder setInstrumentationVersion(String version) {
                b.setInstrumentationVersion(version);
                return this;
              }

              @Override
              public Tracer build() {
                return capturing(b.build());
              }
            };
          }
        };
  }

  /**
   * The process span the client started last on this thread, if it is still open, and forgets it
   * (each is taken once); null if there is none.
   */
  @Nullable
  Span takeProcessSpan() {
    Span span = lastProcess.get();
    lastProcess.remove();
    if (span == null || (span instanceof ReadableSpan r && r.hasEnded())) {
      return null;
    }
    return span;
  }

  @Override
  public TracerProvider getTracerProvider() {
    return tracers;
  }

  @Override
  public MeterProvider getMeterProvider() {
    return delegate.getMeterProvider();
  }

  @Override
  public LoggerProvider getLogsBridge() {
    return delegate.getLogsBridge();
  }

  @Override
  public ContextPropagators getPropagators() {
    return delegate.getPropagators();
  }

  private Tracer capturing(Tracer tracer) {
    return name -> {
      SpanBuilder b = tracer.spanBuilder(name);
      return name.endsWith(PROCESS_SUFFIX) ? new Capturing(b) : b;
    };
  }

  /** A span builder that remembers the span it starts as this thread's last process span. */
  private final class Capturing implements SpanBuilder {
    private final SpanBuilder b;

    Capturing(SpanBuilder b) {
      this.b = b;
    }

    @Override
    public Span startSpan() {
      Span span = b.startSpan();
      lastProcess.set(span);
      return span;
    }

    @Override
    public SpanBuilder setParent(Context context) {
      b.setParent(context);
      return this;
    }

    @Override
    public SpanBuilder setNoParent() {
      b.setNoParent();
      return this;
    }

    @Override
    public SpanBuilder addLink(SpanContext spanContext) {
      b.addLink(spanContext);
      return this;
    }

    @Override
    public SpanBuilder addLink(SpanContext spanContext, Attributes attributes) {
      b.addLink(spanContext, attributes);
      return this;
    }

    @Override
    public SpanBuilder setAttribute(String key, String value) {
      b.setAttribute(key, value);
      return this;
    }

    @Override
    public SpanBuilder setAttribute(String key, long value) {
      b.setAttribute(key, value);
      return this;
    }

    @Override
    public SpanBuilder setAttribute(String key, double value) {
      b.setAttribute(key, value);
      return this;
    }

    @Override
    public SpanBuilder setAttribute(String key, boolean value) {
      b.setAttribute(key, value);
      return this;
    }

    @Override
    public <T> SpanBuilder setAttribute(AttributeKey<T> key, T value) {
      b.setAttribute(key, value);
      return this;
    }

    @Override
    public SpanBuilder setAllAttributes(Attributes attributes) {
      b.setAllAttributes(attributes);
      return this;
    }

    @Override
    public SpanBuilder setSpanKind(SpanKind spanKind) {
      b.setSpanKind(spanKind);
      return this;
    }

    @Override
    public SpanBuilder setStartTimestamp(long startTimestamp, TimeUnit unit) {
      b.setStartTimestamp(startTimestamp, unit);
      return this;
    }
  }
}
