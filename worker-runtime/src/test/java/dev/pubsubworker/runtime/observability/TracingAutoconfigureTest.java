package dev.pubsubworker.runtime.observability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pubsubworker.runtime.config.TracingConfig;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.autoconfigure.spi.ConfigProperties;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.net.URI;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The SDK is OpenTelemetry's autoconfigured one: {@code otel.*} properties (what {@code OTEL_*}
 * variables say; passed here as the lowest-priority property source, never through the process
 * environment) win over the worker's {@code observability.tracing} settings, which are the
 * defaults; metrics and logs exporters stay off; {@code exporter = none} builds no SDK at all.
 */
class TracingAutoconfigureTest {

  private static final AttributeKey<String> SERVICE_NAME = AttributeKey.stringKey("service.name");

  private static final TracingConfig SETTINGS =
      new TracingConfig(
          TracingConfig.Exporter.OTLP,
          URI.create("http://collector.internal:4318/v1/traces"),
          1.0,
          "orders-worker");

  private static List<SpanData> oneRootSpan(Map<String, String> otelProperties, TracingConfig c) {
    InMemorySpanExporter exporter = InMemorySpanExporter.create();
    try (Tracing tracing = Tracing.forTest(c, "test-project", otelProperties, exporter)) {
      OpenTelemetry otel = tracing.clientOpenTelemetry().orElseThrow();
      otel.getTracer("probe").spanBuilder("root").startSpan().end();
      return List.copyOf(exporter.getFinishedSpanItems());
    }
  }

  @Test
  void the_worker_settings_are_the_defaults() {
    SpanData span = oneRootSpan(Map.of(), SETTINGS).get(0);
    assertThat(span.getResource().getAttribute(SERVICE_NAME)).isEqualTo("orders-worker");
    try (Tracing tracing = Tracing.forTest(SETTINGS, "p", Map.of(), null)) {
      ConfigProperties c = tracing.settings();
      assertThat(c.getString("otel.exporter.otlp.traces.endpoint"))
          .isEqualTo("http://collector.internal:4318/v1/traces");
      assertThat(c.getString("otel.traces.sampler")).isEqualTo("parentbased_traceidratio");
      assertThat(c.getDouble("otel.traces.sampler.arg")).isEqualTo(1.0);
      assertThat(c.getString("otel.metrics.exporter")).isEqualTo("none");
      assertThat(c.getString("otel.logs.exporter")).isEqualTo("none");
    }
  }

  @Test
  void otel_resource_attributes_and_service_name_win_over_the_settings() {
    SpanData span =
        oneRootSpan(
                Map.of(
                    "otel.resource.attributes",
                    "deployment.environment.name=staging,service.name=from-resource"),
                SETTINGS)
            .get(0);
    assertThat(span.getResource().getAttribute(SERVICE_NAME)).isEqualTo("from-resource");
    assertThat(
            span.getResource().getAttribute(AttributeKey.stringKey("deployment.environment.name")))
        .isEqualTo("staging");

    SpanData named = oneRootSpan(Map.of("otel.service.name", "from-otel"), SETTINGS).get(0);
    assertThat(named.getResource().getAttribute(SERVICE_NAME)).isEqualTo("from-otel");
  }

  @Test
  void an_otel_sampler_wins_over_sample_ratio() {
    assertThat(oneRootSpan(Map.of("otel.traces.sampler", "always_off"), SETTINGS)).isEmpty();
    TracingConfig never =
        new TracingConfig(SETTINGS.exporter(), SETTINGS.otlpEndpoint(), 0.0, "orders-worker");
    assertThat(oneRootSpan(Map.of(), never)).as("sample-ratio 0.0: no new trace").isEmpty();
    assertThat(oneRootSpan(Map.of("otel.traces.sampler", "always_on"), never)).hasSize(1);
  }

  @Test
  void otel_sampler_arg_alone_sets_the_ratio_and_an_otel_protocol_wins_over_the_default() {
    try (Tracing tracing =
        Tracing.forTest(
            SETTINGS,
            "p",
            Map.of(
                "otel.traces.sampler.arg", "0.25",
                "otel.exporter.otlp.protocol", "grpc",
                "otel.exporter.otlp.traces.protocol", "http/json"),
            null)) {
      ConfigProperties c = tracing.settings();
      assertThat(c.getString("otel.traces.sampler")).isEqualTo("parentbased_traceidratio");
      assertThat(c.getDouble("otel.traces.sampler.arg")).isEqualTo(0.25);
      assertThat(c.getString("otel.exporter.otlp.traces.protocol")).isEqualTo("http/json");
    }
  }

  @Test
  void sample_ratio_is_parent_based_a_sampled_publisher_is_kept() {
    TracingConfig never =
        new TracingConfig(SETTINGS.exporter(), SETTINGS.otlpEndpoint(), 0.0, "orders-worker");
    InMemorySpanExporter exporter = InMemorySpanExporter.create();
    try (Tracing tracing = Tracing.forTest(never, "test-project", Map.of(), exporter)) {
      SpanContext publisher =
          SpanContext.createFromRemoteParent(
              "4bf92f3577b34da6a3ce929d0e0e4736",
              "00f067aa0ba902b7",
              TraceFlags.getSampled(),
              TraceState.getDefault());
      tracing
          .clientOpenTelemetry()
          .orElseThrow()
          .getTracer("probe")
          .spanBuilder("child")
          .setParent(Context.root().with(Span.wrap(publisher)))
          .startSpan()
          .end();
      assertThat(exporter.getFinishedSpanItems())
          .singleElement()
          .extracting(SpanData::getTraceId)
          .isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
    }
  }

  @Test
  void an_otel_endpoint_wins_over_otlp_endpoint() {
    try (Tracing tracing =
        Tracing.forTest(
            SETTINGS,
            "p",
            Map.of("otel.exporter.otlp.endpoint", "http://otel.example:4318"),
            null)) {
      ConfigProperties c = tracing.settings();
      // Not overridden by the setting: autoconfigure appends /v1/traces to the generic endpoint.
      assertThat(c.getString("otel.exporter.otlp.traces.endpoint")).isNull();
      assertThat(c.getString("otel.exporter.otlp.endpoint")).isEqualTo("http://otel.example:4318");
    }
  }

  @Test
  void exporter_none_builds_no_sdk_and_leaves_the_client_untraced() {
    try (Tracing tracing = Tracing.create(TracingConfig.off(), "test-project")) {
      assertThat(tracing.clientOpenTelemetry()).isEmpty();
      assertThat(tracing.settings()).isNull();
    }
  }

  @Test
  void exporter_otlp_builds_the_autoconfigured_sdk() {
    try (Tracing tracing = Tracing.create(SETTINGS, "test-project")) {
      assertThat(tracing.clientOpenTelemetry()).isPresent();
      assertThat(tracing.settings().getString("otel.traces.exporter")).isEqualTo("otlp");
      assertThat(tracing.settings().getString("otel.exporter.otlp.protocol"))
          .isEqualTo("http/protobuf");
    }
  }
}
