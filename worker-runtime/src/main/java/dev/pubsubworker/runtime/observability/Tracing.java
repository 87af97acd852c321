package dev.pubsubworker.runtime.observability;

import com.google.api.core.InternalApi;
import com.google.common.hash.Hashing;
import com.google.pubsub.v1.PubsubMessage;
import dev.pubsubworker.core.GuardListener;
import dev.pubsubworker.pubsub.DeliveryObserver;
import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.runtime.config.TracingConfig;
import dev.pubsubworker.runtime.pubsub.ClientTracing;
import dev.pubsubworker.runtime.pubsub.DispatchListener;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import javax.annotation.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * OpenTelemetry tracing of deliveries, through the google-cloud-pubsub client's own tracing. With
 * tracing on, the worker's subscribers (and dead-letter publishers) are built with the client's
 * OpenTelemetry tracing enabled ({@link ClientTracing}): per message the client starts a {@code
 * "<subscription> subscribe"} span (kind CONSUMER, continuing the publisher's {@code
 * googclient_traceparent}; attributes {@code messaging.destination.name}, {@code
 * messaging.message.id}, ordering key, delivery attempt, ...) and, on the handler thread, its
 * {@code "<subscription> process"} child, which it ends at the ack or nack. The worker adds no span
 * of its own for the delivery; its spans are children of the client's process span: the lock-store
 * verbs the guard calls while the delivery is current ({@code claim}, {@code complete}, {@code
 * release}, ...) and the handler ({@code handle}), on whichever thread they run. On the client's
 * process span the worker sets {@code pubsub_worker.key.sha256} (the first 32 hex digits of the
 * stored key's SHA-256, never the key), {@code pubsub_worker.fence} and {@code
 * pubsub_worker.outcome}, and status ERROR when the delivery is nacked. While a delivery is current
 * on a thread, the MDC carries its trace and span ids under the names Cloud Logging links ({@link
 * MdcKeys#TRACE}, {@link MdcKeys#SPAN_ID}, {@link MdcKeys#TRACE_SAMPLED}): the client's trace,
 * which is the publisher's.
 *
 * <p>The SDK is built by OpenTelemetry's autoconfiguration, so every {@code OTEL_*} environment
 * variable and {@code otel.*} system property applies (exporter, endpoint, headers, protocol,
 * sampler, resource attributes, service name, batch settings, ...). Precedence, highest first: an
 * {@code OTEL_*} variable or {@code otel.*} system property; the worker's {@code
 * observability.tracing} settings ({@code otlp-endpoint} unless {@code OTEL_EXPORTER_OTLP_ENDPOINT}
 * or {@code OTEL_EXPORTER_OTLP_TRACES_ENDPOINT} is set, {@code sample-ratio} as a parent-based
 * ratio sampler unless {@code OTEL_TRACES_SAMPLER} is set, {@code service-name} unless {@code
 * OTEL_SERVICE_NAME} or a {@code service.name} in {@code OTEL_RESOURCE_ATTRIBUTES} is set); then
 * the worker's defaults: traces exported over OTLP HTTP/protobuf (the only protocol bundled),
 * metrics and logs exporters {@code none}.
 *
 * <p>With the exporter {@code none} tracing is off whatever {@code OTEL_*} says: no SDK is built,
 * no exporter thread starts, the client's tracing stays off, and no span is recorded; a message
 * that carries a trace context ({@code googclient_traceparent}, or else plain {@code traceparent})
 * still puts its trace id in the log lines. Thread-safe; {@link #close} flushes and stops the
 * exporter.
 */
@InternalApi("the spans behind Observability")
public final class Tracing implements DispatchListener, ClientTracing, AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(Tracing.class);
  private static final String INSTRUMENTATION = "dev.pubsubworker.runtime";
  private static final String CLIENT_PREFIX = "googclient_";
  private static final AttributeKey<String> KEY_HASH =
      AttributeKey.stringKey("pubsub_worker.key.sha256");
  private static final AttributeKey<Long> FENCE = AttributeKey.longKey("pubsub_worker.fence");
  private static final AttributeKey<String> OUTCOME =
      AttributeKey.stringKey("pubsub_worker.outcome");
  private static final AttributeKey<String> VERB = AttributeKey.stringKey("pubsub_worker.verb");

  /** The worker's defaults, below its settings and every {@code OTEL_*}/{@code otel.*}. */
  private static final Map<String, String> DEFAULTS =
      Map.of(
          "otel.traces.exporter", "otlp",
          // The generic key: OTEL_EXPORTER_OTLP_PROTOCOL and its _TRACES_ form both override it.
          "otel.exporter.otlp.protocol", "http/protobuf",
          "otel.metrics.exporter", "none",
          "otel.logs.exporter", "none");

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

  private final @Nullable OpenTelemetrySdk sdk;
  private final @Nullable ConfigProperties settings;
  private final @Nullable ClientProcessSpans client;
  private final Tracer tracer;
  private final String projectId;

  private Tracing(@Nullable Built built, String projectId) {
    this.sdk = built == null ? null : built.sdk();
    this.settings = built == null ? null : built.settings();
    this.client = sdk == null ? null : new ClientProcessSpans(sdk);
    this.tracer = (sdk == null ? OpenTelemetry.noop() : sdk).getTracer(INSTRUMENTATION);
    this.projectId = projectId;
  }

  /**
   * Tracing as configured: off with {@link TracingConfig.Exporter#NONE}; with {@link
   * TracingConfig.Exporter#OTLP} an SDK built by autoconfiguration from the {@code OTEL_*}
   * environment and {@code otel.*} system properties over {@code config} (see the class
   * documentation), by default a batching OTLP/HTTP exporter (nothing is sent until a span ends; an
   * unreachable endpoint costs dropped spans and a log line from the exporter, never a delivery).
   *
   * @param projectId the Google Cloud project, for the log lines' trace field
   * @throws io.opentelemetry.sdk.autoconfigure.spi.ConfigurationException if an {@code OTEL_*}
   *     setting is invalid (an unknown exporter or sampler, a malformed endpoint, ...)
   */
  public static Tracing create(TracingConfig config, String projectId) {
    if (config.exporter() == TracingConfig.Exporter.NONE) {
      return new Tracing(null, projectId);
    }
    return new Tracing(autoconfigure(config, Map.of(), null), projectId);
  }

  /**
   * Tracing on whatever {@code config.exporter()} says, built like {@link #create} with {@code
   * properties} as if they were {@code otel.*} system properties below the real ones (for tests:
   * the process environment cannot be set), and every ended span also handed to {@code exporter} at
   * once (no batching), when not null. {@code otel.traces.exporter} defaults to {@code none} here.
   */
  public static Tracing forTest(
      TracingConfig config,
      String projectId,
      Map<String, String> properties,
      @Nullable SpanExporter exporter) {
    Map<String, String> p = new HashMap<>();
    p.put("otel.traces.exporter", "none");
    p.putAll(properties);
    return new Tracing(autoconfigure(config, p, exporter), projectId);
  }

  /**
   * Tracing that hands every ended span to {@code exporter} at once (no batching), whatever {@code
   * config.exporter()} says: for tests, with an in-memory exporter.
   */
  public static Tracing forExporter(TracingConfig config, String projectId, SpanExporter exporter) {
    return forTest(config, projectId, Map.of(), exporter);
  }

  /** An autoconfigured SDK and the properties it was built from. */
  private record Built(OpenTelemetrySdk sdk, @Nullable ConfigProperties settings) {}

  /** The {@code otel.*} properties the SDK was built from (all sources merged); null when off. */
  @Nullable
  ConfigProperties settings() {
    return settings;
  }

  private static Built autoconfigure(
      TracingConfig config, Map<String, String> properties, @Nullable SpanExporter exporter) {
    AtomicReference<ConfigProperties> resolved = new AtomicReference<>();
    OpenTelemetrySdk sdk =
        AutoConfiguredOpenTelemetrySdk.builder()
            .addPropertiesSupplier(() -> DEFAULTS)
            .addPropertiesSupplier(() -> properties)
            .addPropertiesCustomizer(c -> fromSettings(config, c))
            .addTracerProviderCustomizer(
                (b, c) -> {
                  resolved.set(c);
                  return exporter == null
                      ? b
                      : b.addSpanProcessor(SimpleSpanProcessor.create(exporter));
                })
            .disableShutdownHook()
            .build()
            .getOpenTelemetrySdk();
    ConfigProperties c = resolved.get();
    if (c != null) {
      log.info(
          "tracing on: traces exporter {} ({}), sampler {}{}, service.name {}",
          c.getString("otel.traces.exporter"),
          Optional.ofNullable(c.getString("otel.exporter.otlp.traces.endpoint"))
              .orElseGet(() -> c.getString("otel.exporter.otlp.endpoint")),
          c.getString("otel.traces.sampler"),
          c.getString("otel.traces.sampler.arg") == null
              ? ""
              : " " + c.getString("otel.traces.sampler.arg"),
          Optional.ofNullable(c.getString("otel.service.name"))
              .orElseGet(() -> c.getMap("otel.resource.attributes").get("service.name")));
    }
    return new Built(sdk, c);
  }

  /**
   * The worker's settings as {@code otel.*} properties, each only where no {@code OTEL_*} variable
   * or {@code otel.*} property said otherwise.
   */
  static Map<String, String> fromSettings(TracingConfig config, ConfigProperties c) {
    Map<String, String> p = new HashMap<>();
    if (c.getString("otel.exporter.otlp.traces.endpoint") == null
        && c.getString("otel.exporter.otlp.endpoint") == null) {
      p.put("otel.exporter.otlp.traces.endpoint", config.otlpEndpoint().toString());
    }
    if (c.getString("otel.traces.sampler") == null) {
      p.put("otel.traces.sampler", "parentbased_traceidratio");
      if (c.getString("otel.traces.sampler.arg") == null) {
        p.put("otel.traces.sampler.arg", Double.toString(config.sampleRatio()));
      }
    }
    if (c.getString("otel.service.name") == null
        && !c.getMap("otel.resource.attributes").containsKey("service.name")) {
      p.put("otel.service.name", config.serviceName());
    }
    return p;
  }

  /** The OpenTelemetry the client library traces with; empty when tracing is off. */
  @Override
  public Optional<OpenTelemetry> clientOpenTelemetry() {
    return Optional.ofNullable(client);
  }

  /**
   * The delivery's parent: the client's process span, started on this thread just before it called
   * the receiver; or else (tracing off, or a receiver not called by the client) the publisher's
   * context read from the message's attributes.
   */
  @Override
  public DeliveryObserver deliveryStarted(String subscription, PubsubMessage message) {
    Span parent = client == null ? null : client.takeProcessSpan();
    if (parent == null) {
      parent =
          Span.fromContext(
              W3CTraceContextPropagator.getInstance().extract(Context.root(), message, ATTRIBUTES));
    }
    if (!parent.getSpanContext().isValid()) {
      return DeliveryObserver.NONE;
    }
    return new TracedDelivery(parent);
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
    if (sdk != null) {
      sdk.getSdkTracerProvider().forceFlush().join(5, TimeUnit.SECONDS);
      sdk.shutdown().join(5, TimeUnit.SECONDS);
    }
  }

  private String traceField(SpanContext context) {
    return "projects/" + projectId + "/traces/" + context.getTraceId();
  }

  /** One delivery's parent span (the client's), made current on each thread that works on it. */
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
      if (span.isRecording()) {
        span.setAttribute(FENCE, fence);
      }
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

    /** Before the ack or nack, at which the client ends its process span. */
    @Override
    public void settling(Outcome outcome) {
      if (span.isRecording()) {
        span.setAttribute(OUTCOME, outcome.name().toLowerCase(Locale.ROOT).replace('_', '-'));
        if (!outcome.acked()) {
          span.setStatus(StatusCode.ERROR, "nacked");
        }
      }
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
