package dev.pubsubworker.runtime.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.runtime.config.TracingConfig;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.worker.Worker;
import dev.pubsubworker.testservices.SubscriptionSpec;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Traces of a real run on the embedded Pub/Sub server, spans caught by an in-memory exporter: a
 * message carrying the publisher's context (the {@code googclient_traceparent} attribute the client
 * library writes) continues that trace with a process span whose children are the claim, the
 * handler and the complete; the handler's JSON log lines carry the trace and span ids Cloud Logging
 * links; the key appears only hashed; a failing handler marks its spans as errors.
 */
class TracingEndToEndTest {

  private static final Logger handlerLog = LoggerFactory.getLogger("orders.handler");
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final AttributeKey<String> OUTCOME =
      AttributeKey.stringKey("pubsub_worker.outcome");
  private static final AttributeKey<String> KEY_HASH =
      AttributeKey.stringKey("pubsub_worker.key.sha256");

  @Test
  void a_delivery_continues_the_publishers_trace_with_claim_handle_and_complete_spans()
      throws Exception {
    InMemorySpanExporter exporter = InMemorySpanExporter.create();
    String traceId = UUID.randomUUID().toString().replace("-", "");
    String publisherSpanId = "00f067aa0ba902b7";
    String orderId = "po-" + UUID.randomUUID();
    MessageHandler handler =
        (message, context) -> {
          handlerLog.info("charging the card");
          if (message.attributes().containsKey("fail")) {
            throw new IllegalStateException("card declined");
          }
        };
    List<String> lines;
    List<SpanData> spans;
    try (CapturedLog captured = CapturedLog.attach("json");
        Tracing tracing = Tracing.forExporter(TracingConfig.off(), "test-project", exporter);
        EmulatorWorkers w = new EmulatorWorkers(SubscriptionSpec.defaults())) {
      WorkerConfig config =
          w.config("key = \"attribute:order_id\"", "pubsub-worker.logging.format = json");
      Worker worker =
          w.create(config, handler, id -> List.of(tracing.guardListener()), List.of(tracing));
      worker.start();
      w.publish(
          "{}",
          Map.of(
              "order_id",
              orderId,
              "googclient_traceparent",
              "00-" + traceId + "-" + publisherSpanId + "-01"));
      w.publish("{}", Map.of("order_id", "po-" + UUID.randomUUID(), "fail", "yes"));
      await()
          .atMost(WAIT)
          .until(
              () ->
                  processSpans(exporter).stream()
                          .anyMatch(s -> "processed".equals(s.getAttributes().get(OUTCOME)))
                      && processSpans(exporter).stream()
                          .anyMatch(s -> "failed".equals(s.getAttributes().get(OUTCOME))));
      worker.stop();
      lines = new ArrayList<>(captured.events);
      // Taken before the tracing closes: shutting the exporter down empties it.
      spans = List.copyOf(exporter.getFinishedSpanItems());
    }

    SpanData process =
        processSpans(spans).stream()
            .filter(s -> "processed".equals(s.getAttributes().get(OUTCOME)))
            .findFirst()
            .orElseThrow();
    assertThat(process.getName()).isEqualTo("test process");
    assertThat(process.getKind()).isEqualTo(SpanKind.CONSUMER);
    assertThat(process.getTraceId()).isEqualTo(traceId);
    assertThat(process.getParentSpanId()).isEqualTo(publisherSpanId);
    assertThat(process.getAttributes().get(AttributeKey.stringKey("messaging.destination.name")))
        .isEqualTo("test");
    assertThat(process.getAttributes().get(AttributeKey.longKey("pubsub_worker.fence")))
        .isEqualTo(1L);
    assertThat(process.getAttributes().get(KEY_HASH)).matches("[0-9a-f]{32}");
    assertThat(process.getStatus().getStatusCode()).isNotEqualTo(StatusCode.ERROR);
    for (SpanData s : spans) {
      assertThat(s.getAttributes().asMap().values().toString()).doesNotContain(orderId);
    }

    List<String> children =
        spans.stream()
            .filter(s -> s.getParentSpanId().equals(process.getSpanId()))
            .map(SpanData::getName)
            .toList();
    assertThat(children).containsExactlyInAnyOrder("claim", "handle", "complete");
    SpanData handle = child(spans, process, "handle");

    JsonNode charging =
        lines.stream()
            .map(TracingEndToEndTest::parse)
            .filter(n -> n.get("message").asText().equals("charging the card"))
            .filter(n -> n.path(MdcKeys.TRACE).asText().endsWith(traceId))
            .findFirst()
            .orElseThrow();
    assertThat(charging.get(MdcKeys.TRACE).asText())
        .isEqualTo("projects/test-project/traces/" + traceId);
    assertThat(charging.get(MdcKeys.SPAN_ID).asText()).isEqualTo(handle.getSpanId());
    assertThat(charging.get(MdcKeys.TRACE_SAMPLED).isBoolean()).isTrue();

    SpanData failed =
        processSpans(spans).stream()
            .filter(s -> "failed".equals(s.getAttributes().get(OUTCOME)))
            .findFirst()
            .orElseThrow();
    assertThat(failed.getTraceId()).as("no publisher context: a new trace").isNotEqualTo(traceId);
    assertThat(failed.getParentSpanContext().isValid()).isFalse();
    assertThat(failed.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    SpanData failedHandle = child(spans, failed, "handle");
    assertThat(failedHandle.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    assertThat(failedHandle.getEvents()).anyMatch(e -> e.getName().equals("exception"));
    assertThat(spans)
        .filteredOn(s -> s.getParentSpanId().equals(failed.getSpanId()))
        .extracting(SpanData::getName)
        .contains("claim", "handle", "release");
  }

  private static List<SpanData> processSpans(InMemorySpanExporter exporter) {
    return processSpans(exporter.getFinishedSpanItems());
  }

  private static List<SpanData> processSpans(List<SpanData> spans) {
    return spans.stream().filter(s -> s.getName().endsWith(" process")).toList();
  }

  private static SpanData child(List<SpanData> spans, SpanData parent, String name) {
    return spans.stream()
        .filter(s -> s.getParentSpanId().equals(parent.getSpanId()) && s.getName().equals(name))
        .findFirst()
        .orElseThrow();
  }

  private static JsonNode parse(String line) {
    try {
      return JSON.readTree(line);
    } catch (Exception e) {
      throw new AssertionError("not JSON: " + line, e);
    }
  }
}
