package dev.pubsubworker.runtime.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.cloud.pubsub.v1.Publisher;
import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.ReceivedMessage;
import com.google.pubsub.v1.SubscriptionName;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.api.PoisonMessageException;
import dev.pubsubworker.runtime.config.TracingConfig;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.worker.Worker;
import dev.pubsubworker.testservices.SubscriptionSpec;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Traces of a real run on the embedded Pub/Sub server, spans caught by an in-memory exporter: a
 * message carrying the publisher's context (the {@code googclient_traceparent} attribute the client
 * library writes) continues that trace through the client's own spans, {@code "<subscription>
 * subscribe"} and its {@code "<subscription> process"} child, whose children are the worker's
 * claim, handle and complete (and no span of the worker's duplicates one of the client's); the
 * handler's JSON log lines carry the trace and span ids Cloud Logging links; the key appears only
 * hashed; a failing handler marks its spans as errors; a message published by a traced client
 * Publisher keeps that publisher's trace id end to end.
 */
class TracingEndToEndTest {

  private static final Logger handlerLog = LoggerFactory.getLogger("orders.handler");
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final AttributeKey<String> OUTCOME =
      AttributeKey.stringKey("pubsub_worker.outcome");
  private static final AttributeKey<String> KEY_HASH =
      AttributeKey.stringKey("pubsub_worker.key.sha256");
  private static final String CLIENT_SCOPE = "com.google.cloud.pubsub.v1";
  private static final String OUR_SCOPE = "dev.pubsubworker.runtime";

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
    String subscriptionId;
    try (CapturedLog captured = CapturedLog.attach("json");
        Tracing tracing = Tracing.forExporter(TracingConfig.off(), "test-project", exporter);
        EmulatorWorkers w = new EmulatorWorkers(SubscriptionSpec.defaults())) {
      subscriptionId = w.fixture.subscription().getSubscription();
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
    assertThat(process.getName()).isEqualTo(subscriptionId + " process");
    assertThat(process.getInstrumentationScopeInfo().getName()).isEqualTo(CLIENT_SCOPE);
    assertThat(process.getTraceId()).isEqualTo(traceId);
    SpanData subscribe = parentOf(spans, process);
    assertThat(subscribe.getName()).isEqualTo(subscriptionId + " subscribe");
    assertThat(subscribe.getInstrumentationScopeInfo().getName()).isEqualTo(CLIENT_SCOPE);
    assertThat(subscribe.getKind()).isEqualTo(SpanKind.CONSUMER);
    assertThat(subscribe.getTraceId()).isEqualTo(traceId);
    assertThat(subscribe.getParentSpanId()).isEqualTo(publisherSpanId);
    assertThat(subscribe.getAttributes().get(AttributeKey.stringKey("messaging.destination.name")))
        .as("the client names the Pub/Sub subscription, not the worker's id for it")
        .isEqualTo(subscriptionId);
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
    for (String name : List.of("claim", "handle", "complete")) {
      SpanData ours = child(spans, process, name);
      assertThat(ours.getTraceId()).isEqualTo(traceId);
      assertThat(ours.getInstrumentationScopeInfo().getName()).isEqualTo(OUR_SCOPE);
    }
    // No span of ours duplicates one of the client's: ours are only the store verbs and handle.
    assertThat(spans)
        .filteredOn(s -> s.getInstrumentationScopeInfo().getName().equals(OUR_SCOPE))
        .extracting(SpanData::getName)
        .allMatch(n -> List.of("claim", "handle", "complete", "release", "extend").contains(n));
    assertThat(spans)
        .filteredOn(s -> s.getName().endsWith(" process") || s.getName().endsWith(" subscribe"))
        .allMatch(s -> s.getInstrumentationScopeInfo().getName().equals(CLIENT_SCOPE));

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
    assertThat(parentOf(spans, failed).getParentSpanContext().isValid()).isFalse();
    assertThat(failed.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    SpanData failedHandle = child(spans, failed, "handle");
    assertThat(failedHandle.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    assertThat(failedHandle.getEvents()).anyMatch(e -> e.getName().equals("exception"));
    assertThat(spans)
        .filteredOn(s -> s.getParentSpanId().equals(failed.getSpanId()))
        .extracting(SpanData::getName)
        .contains("claim", "handle", "release");
  }

  @Test
  void a_message_from_a_traced_client_publisher_keeps_its_trace_id_end_to_end() throws Exception {
    InMemorySpanExporter exporter = InMemorySpanExporter.create();
    InMemorySpanExporter publisherSpans = InMemorySpanExporter.create();
    List<String> lines;
    List<SpanData> spans;
    List<SpanData> published;
    // The publisher is another process: its own SDK, its own exporter.
    try (OpenTelemetrySdk publisherOtel =
            OpenTelemetrySdk.builder()
                .setTracerProvider(
                    SdkTracerProvider.builder()
                        .addSpanProcessor(SimpleSpanProcessor.create(publisherSpans))
                        .build())
                .build();
        CapturedLog captured = CapturedLog.attach("json");
        Tracing tracing = Tracing.forExporter(TracingConfig.off(), "test-project", exporter);
        EmulatorWorkers w = new EmulatorWorkers(SubscriptionSpec.defaults())) {
      WorkerConfig config = w.config("", "pubsub-worker.logging.format = json");
      Worker worker =
          w.create(
              config,
              (message, context) -> handlerLog.info("shipping the order"),
              id -> List.of(tracing.guardListener()),
              List.of(tracing));
      worker.start();
      Publisher publisher =
          w.pubsub
              .newPublisher(w.fixture.topic())
              .setOpenTelemetry(publisherOtel)
              .setEnableOpenTelemetryTracing(true)
              .build();
      try {
        publisher
            .publish(PubsubMessage.newBuilder().setData(ByteString.copyFromUtf8("{}")).build())
            .get();
      } finally {
        publisher.shutdown();
        publisher.awaitTermination(30, TimeUnit.SECONDS);
      }
      await()
          .atMost(WAIT)
          .until(
              () ->
                  processSpans(exporter).stream()
                      .anyMatch(s -> "processed".equals(s.getAttributes().get(OUTCOME))));
      worker.stop();
      lines = new ArrayList<>(captured.events);
      spans = List.copyOf(exporter.getFinishedSpanItems());
      published = List.copyOf(publisherSpans.getFinishedSpanItems());
    }

    SpanData create =
        published.stream().filter(s -> s.getName().endsWith(" create")).findFirst().orElseThrow();
    String traceId = create.getTraceId();
    SpanData process = processSpans(spans).get(0);
    SpanData subscribe = parentOf(spans, process);
    assertThat(subscribe.getTraceId()).isEqualTo(traceId);
    assertThat(subscribe.getParentSpanId()).isEqualTo(create.getSpanId());
    assertThat(process.getTraceId()).isEqualTo(traceId);
    SpanData handle = child(spans, process, "handle");
    assertThat(handle.getTraceId()).isEqualTo(traceId);
    assertThat(child(spans, process, "claim").getTraceId()).isEqualTo(traceId);
    JsonNode shipping =
        lines.stream()
            .map(TracingEndToEndTest::parse)
            .filter(n -> n.get("message").asText().equals("shipping the order"))
            .findFirst()
            .orElseThrow();
    assertThat(shipping.get(MdcKeys.TRACE).asText())
        .isEqualTo("projects/test-project/traces/" + traceId);
    assertThat(shipping.get(MdcKeys.SPAN_ID).asText()).isEqualTo(handle.getSpanId());
    assertThat(shipping.get(MdcKeys.TRACE_SAMPLED).asBoolean()).isTrue();
  }

  @Test
  void a_dead_letter_is_published_under_the_deliverys_trace() throws Exception {
    InMemorySpanExporter exporter = InMemorySpanExporter.create();
    String traceId = UUID.randomUUID().toString().replace("-", "");
    List<SpanData> spans;
    PubsubMessage letter;
    try (Tracing tracing = Tracing.forExporter(TracingConfig.off(), "test-project", exporter);
        EmulatorWorkers w =
            new EmulatorWorkers(SubscriptionSpec.newBuilder().setDeadLetterPolicy(5).build())) {
      Worker worker =
          w.create(
              w.config("", ""),
              (message, context) -> {
                throw new PoisonMessageException("cannot be parsed");
              },
              id -> List.of(tracing.guardListener()),
              List.of(tracing));
      worker.start();
      w.publish("{}", Map.of("googclient_traceparent", "00-" + traceId + "-00f067aa0ba902b7-01"));
      List<ReceivedMessage> got = new ArrayList<>();
      SubscriptionName dead = w.fixture.requireDeadLetterSubscription();
      await()
          .atMost(WAIT)
          .until(
              () -> {
                List<ReceivedMessage> batch = w.pubsub.pull(dead, 10, Duration.ofSeconds(2));
                got.addAll(batch);
                w.pubsub.acknowledge(dead, batch.stream().map(ReceivedMessage::getAckId).toList());
                return !got.isEmpty();
              });
      letter = got.get(0).getMessage();
      await()
          .atMost(WAIT)
          .until(
              () ->
                  processSpans(exporter).stream()
                      .anyMatch(s -> "dead-lettered".equals(s.getAttributes().get(OUTCOME))));
      worker.stop();
      spans = List.copyOf(exporter.getFinishedSpanItems());
    }

    SpanData process = processSpans(spans).get(0);
    assertThat(process.getTraceId()).isEqualTo(traceId);
    SpanData create =
        spans.stream().filter(s -> s.getName().endsWith(" create")).findFirst().orElseThrow();
    assertThat(create.getInstrumentationScopeInfo().getName()).isEqualTo(CLIENT_SCOPE);
    assertThat(create.getTraceId()).isEqualTo(traceId);
    assertThat(create.getParentSpanId()).isEqualTo(process.getSpanId());
    // The letter carries the dead-letter publish's context, so a redrive continues the trace.
    assertThat(letter.getAttributesOrThrow("googclient_traceparent"))
        .isEqualTo("00-" + traceId + "-" + create.getSpanId() + "-01");
  }

  private static SpanData parentOf(List<SpanData> spans, SpanData child) {
    return spans.stream()
        .filter(s -> s.getSpanId().equals(child.getParentSpanId()))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no parent of " + child));
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
