package dev.pubsubworker.runtime.observability;

import com.google.api.core.InternalApi;
import com.google.common.hash.Hashing;
import com.google.pubsub.v1.PubsubMessage;
import dev.pubsubworker.core.GuardListener;
import dev.pubsubworker.pubsub.DeliveryObserver;
import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.runtime.config.TracingConfig;
import dev.pubsubworker.runtime.pubsub.DispatchListener;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.resources.Resource;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.SpanProcessor;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.slf4j.MDC;

/**
 * OpenTelemetry tracing of deliveries: for each message a {@code "<subscription> process"} span
 * (kind CONSUMER) that continues the publisher's trace, with child spans for the lock-store verbs
 * the guard calls on the delivery's thread ({@code claim}, {@code complete}, {@code release}) and
 * for the handler ({@code handle}). While a delivery is current on a thread, the MDC carries its
 * trace and span ids under the names Cloud Logging links ({@link MdcKeys#TRACE}, {@link
 * MdcKeys#SPAN_ID}, {@link MdcKeys#TRACE_SAMPLED}).
 *
 * <p>The publisher's context is read from the message's {@code googclient_traceparent} and {@code
 * googclient_tracestate} attributes (what google-cloud-pubsub's publisher writes with OpenTelemetry
 * tracing on), or else from plain {@code traceparent}/{@code tracestate} attributes. Attributes of
 * the process span: {@code messaging.system}, {@code messaging.destination.name} (the subscription
 * id), {@code messaging.message.id}, {@code messaging.gcp_pubsub.message.delivery_attempt}, {@code
 * messaging.gcp_pubsub.message.ordering_key} when set, {@code pubsub_worker.key.sha256} (the first
 * 32 hex digits of the stored key's SHA-256, never the key), {@code pubsub_worker.fence} and {@code
 * pubsub_worker.outcome}; its status is ERROR when the delivery was nacked.
 *
 * <p>With the exporter {@code none} no span is recorded or exported, but a message that carries a
 * trace context still puts its trace id in the log lines. Thread-safe; {@link #close} flushes and
 * stops the exporter.
 */
@InternalApi("the spans behind Observability")
public final class Tracing implements DispatchListener, AutoCloseable {

  private static final String INSTRUMENTATION = "dev.pubsubworker.runtime";
  private static final String CLIENT_PREFIX = "googclient_";
  private static final AttributeKey<String> KEY_HASH =
      AttributeKey.stringKey("pubsub_worker.key.sha256");
  private static final AttributeKey<Long> FENCE = AttributeKey.longKey("pubsub_worker.fence");
  private static final AttributeKey<String> OUTCOME =
      AttributeKey.stringKey("pubsub_worker.outcome");
  private static final AttributeKey<String> VERB = AttributeKey.stringKey("pubsub_worker.verb");

  private static final TextMapGetter<PubsubMessage> ATTRIBUTES =
      new TextMapGetter<>() {
        @Override
        public String get(PubsubMessage carrier, String key) {
          if (carrier == null) {
            return null;
          }
          String value = carrier.getAttributesOrDefault(CLIENT_PREFIX + key, null);
          return value != null ? value : carrier.getAttributesOrDefault(key, null);
        }
      };

  private final SdkTracerProvider provider;
  private final Tracer tracer;
  private final String projectId;

  private Tracing(OpenTelemetry openTelemetry, SdkTracerProvider provider, String projectId) {
    this.provider = provider;
    this.tracer = openTelemetry.getTracer(INSTRUMENTATION);
    this.projectId = projectId;
  }

  /**
   * Tracing as configured: nothing exported with {@link TracingConfig.Exporter#NONE}, a batching
   * OTLP/HTTP exporter with {@link TracingConfig.Exporter#OTLP} (nothing is sent until a span ends;
   * an unreachable endpoint costs dropped spans and a log line from the exporter, never a
   * delivery).
   *
   * @param projectId the Google Cloud project, for the log lines' trace field
   */
  public static Tracing create(TracingConfig config, String projectId) {
    if (config.exporter() == TracingConfig.Exporter.NONE) {
      return new Tracing(OpenTelemetry.noop(), null, projectId);
    }
    SpanExporter exporter =
        OtlpHttpSpanExporter.builder().setEndpoint(config.otlpEndpoint().toString()).build();
    return withProcessor(config, projectId, BatchSpanProcessor.builder(exporter).build());
  }

  /**
   * Tracing that hands every ended span to {@code exporter} at once (no batching): for tests, with
   * an in-memory exporter.
   */
  public static Tracing forExporter(TracingConfig config, String projectId, SpanExporter exporter) {
    return withProcessor(config, projectId, SimpleSpanProcessor.create(exporter));
  }

  private static Tracing withProcessor(
      TracingConfig config, String projectId, SpanProcessor processor) {
    SdkTracerProvider provider =
        SdkTracerProvider.builder()
            .setResource(
                Resource.getDefault()
                    .merge(
                        Resource.create(
                            Attributes.of(
                                AttributeKey.stringKey("service.name"), config.serviceName()))))
            .setSampler(Sampler.parentBased(Sampler.traceIdRatioBased(config.sampleRatio())))
            .addSpanProcessor(processor)
            .build();
    OpenTelemetry otel = OpenTelemetrySdk.builder().setTracerProvider(provider).build();
    return new Tracing(otel, provider, projectId);
  }

  @Override
  public DeliveryObserver deliveryStarted(String subscription, PubsubMessage message) {
    Context parent =
        W3CTraceContextPropagator.getInstance().extract(Context.root(), message, ATTRIBUTES);
    var builder =
        tracer
            .spanBuilder(subscription + " process")
            .setParent(parent)
            .setSpanKind(SpanKind.CONSUMER)
            .setAttribute("messaging.system", "gcp_pubsub")
            .setAttribute("messaging.operation.type", "process")
            .setAttribute("messaging.destination.name", subscription)
            .setAttribute("messaging.message.id", message.getMessageId());
    if (!message.getOrderingKey().isEmpty()) {
      builder.setAttribute("messaging.gcp_pubsub.message.ordering_key", message.getOrderingKey());
    }
    Span span = builder.startSpan();
    if (!span.getSpanContext().isValid()) {
      return DeliveryObserver.NONE;
    }
    return new TracedDelivery(span);
  }

  /**
   * A guard listener that records each lock-store verb called on a thread where a delivery is
   * current as a child span of that delivery, timed by the call's own latency. Verbs called
   * elsewhere (the heartbeat's extensions) are not recorded.
   */
  public GuardListener guardListener() {
    return new GuardListener() {
      @Override
      public void backendCall(Verb verb, Duration latency, boolean succeeded) {
        Span current = Span.current();
        if (!current.isRecording()) {
          return;
        }
        Instant end = Instant.now();
        String name = verb.name().toLowerCase(Locale.ROOT);
        Span span =
            tracer
                .spanBuilder(name)
                .setParent(Context.current())
                .setSpanKind(SpanKind.CLIENT)
                .setStartTimestamp(end.minus(latency))
                .setAttribute(VERB, name)
                .startSpan();
        if (!succeeded) {
          span.setStatus(StatusCode.ERROR, "the lock store failed");
        }
        span.end(end);
      }
    };
  }

  @Override
  public void close() {
    if (provider != null) {
      provider.forceFlush().join(5, TimeUnit.SECONDS);
      provider.shutdown().join(5, TimeUnit.SECONDS);
    }
  }

  private String traceField(SpanContext context) {
    return "projects/" + projectId + "/traces/" + context.getTraceId();
  }

  /** One delivery's span, made current on each thread that works on it. */
  private final class TracedDelivery implements DeliveryObserver {
    private final Span span;
    private volatile Span handler;

    TracedDelivery(Span span) {
      this.span = span;
    }

    @Override
    public DeliveryObserver.Scope activate() {
      return current(span);
    }

    @Override
    public void keyResolved(String storedKey) {
      if (span.isRecording()) {
        span.setAttribute(
            KEY_HASH,
            Hashing.sha256()
                .hashString(storedKey, StandardCharsets.UTF_8)
                .toString()
                .substring(0, 32));
      }
    }

    @Override
    public void fenced(long fence) {
      span.setAttribute(FENCE, fence);
    }

    @Override
    public DeliveryObserver.Scope handlerStarted() {
      Span h = tracer.spanBuilder("handle").setParent(Context.current().with(span)).startSpan();
      handler = h;
      DeliveryObserver.Scope scope = current(h);
      return () -> {
        scope.close();
        h.end();
      };
    }

    @Override
    public void handlerFailed(Throwable error) {
      Span h = handler;
      if (h != null) {
        h.recordException(error);
        h.setStatus(StatusCode.ERROR, error.getClass().getName());
      }
    }

    @Override
    public void settled(Outcome outcome) {
      span.setAttribute(OUTCOME, outcome.name().toLowerCase(Locale.ROOT).replace('_', '-'));
      if (!outcome.acked()) {
        span.setStatus(StatusCode.ERROR, "nacked");
      }
      span.end();
    }

    private DeliveryObserver.Scope current(Span s) {
      io.opentelemetry.context.Scope otelScope = s.makeCurrent();
      SpanContext c = s.getSpanContext();
      String previousTrace = MDC.get(MdcKeys.TRACE);
      String previousSpan = MDC.get(MdcKeys.SPAN_ID);
      String previousSampled = MDC.get(MdcKeys.TRACE_SAMPLED);
      MDC.put(MdcKeys.TRACE, traceField(c));
      MDC.put(MdcKeys.SPAN_ID, c.getSpanId());
      MDC.put(MdcKeys.TRACE_SAMPLED, Boolean.toString(c.isSampled()));
      return () -> {
        restore(MdcKeys.TRACE, previousTrace);
        restore(MdcKeys.SPAN_ID, previousSpan);
        restore(MdcKeys.TRACE_SAMPLED, previousSampled);
        otelScope.close();
      };
    }
  }

  private static void restore(String key, String value) {
    if (value == null) {
      MDC.remove(key);
    } else {
      MDC.put(key, value);
    }
  }
}
