package dev.pubsubworker.runtime.observability;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.pubsub.v1.PubsubMessage;
import dev.pubsubworker.core.GuardListener;
import dev.pubsubworker.pubsub.DeliveryObserver;
import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.runtime.config.TracingConfig;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

/**
 * The client's process span is current on no thread (the client only starts it, on the thread that
 * calls the receiver); the delivery carries it to every thread that works on it: a delivery started
 * on one thread and run on another (a queued or parked one) still gets its claim and handle spans,
 * and its log fields, under that process span; the outcome lands on it before the client ends it at
 * the ack.
 */
class TracingAcrossThreadsTest {

  @Test
  void a_delivery_run_on_another_thread_keeps_the_clients_process_span_as_parent()
      throws Exception {
    InMemorySpanExporter exporter = InMemorySpanExporter.create();
    ExecutorService other = Executors.newSingleThreadExecutor();
    try (Tracing tracing =
        Tracing.forTest(TracingConfig.off(), "test-project", Map.of(), exporter)) {
      // As the client does on its handler thread: subscribe span, process child, not made current.
      Tracer client = tracing.clientOpenTelemetry().orElseThrow().getTracer("client");
      Span subscribe = client.spanBuilder("orders-sub subscribe").startSpan();
      Span process =
          client
              .spanBuilder("orders-sub process")
              .setParent(Context.current().with(subscribe))
              .startSpan();
      assertThat(Span.current().getSpanContext().isValid()).isFalse();
      DeliveryObserver delivery =
          tracing.deliveryStarted("orders", PubsubMessage.newBuilder().setMessageId("m-1").build());
      GuardListener guard = tracing.guardListener();

      Future<String[]> ran =
          other.submit(
              () -> {
                DeliveryObserver.Scope traced = delivery.activate();
                try {
                  guard.backendCall(GuardListener.Verb.CLAIM, Duration.ofMillis(2), true);
                  delivery.fenced(7);
                  DeliveryObserver.Scope handling = delivery.handlerStarted();
                  String[] fields = {MDC.get(MdcKeys.TRACE), MDC.get(MdcKeys.SPAN_ID)};
                  handling.close();
                  guard.backendCall(GuardListener.Verb.COMPLETE, Duration.ofMillis(1), true);
                  delivery.settling(Outcome.PROCESSED);
                  return fields;
                } finally {
                  traced.close();
                }
              });
      String[] fields = ran.get(30, TimeUnit.SECONDS);
      process.end(); // the client, at the ack
      subscribe.end();
      delivery.settled(Outcome.PROCESSED);

      List<SpanData> spans = exporter.getFinishedSpanItems();
      SpanData p =
          spans.stream().filter(s -> s.getName().equals("orders-sub process")).findFirst().get();
      List<SpanData> children =
          spans.stream().filter(s -> s.getParentSpanId().equals(p.getSpanId())).toList();
      assertThat(children)
          .extracting(SpanData::getName)
          .containsExactlyInAnyOrder("claim", "handle", "complete");
      assertThat(children).allMatch(s -> s.getTraceId().equals(p.getTraceId()));
      SpanData handle =
          children.stream().filter(s -> s.getName().equals("handle")).findFirst().get();
      assertThat(fields[0]).isEqualTo("projects/test-project/traces/" + p.getTraceId());
      assertThat(fields[1]).isEqualTo(handle.getSpanId());
      assertThat(p.getAttributes().get(AttributeKey.stringKey("pubsub_worker.outcome")))
          .isEqualTo("processed");
      assertThat(p.getAttributes().get(AttributeKey.longKey("pubsub_worker.fence"))).isEqualTo(7L);
      assertThat(p.getStatus().getStatusCode()).isNotEqualTo(StatusCode.ERROR);
      // No span of the worker's own for the delivery.
      assertThat(spans).extracting(SpanData::getName).doesNotContain("orders process");
    } finally {
      other.shutdownNow();
    }
  }

  @Test
  void each_process_span_is_taken_once_by_the_delivery_on_its_thread() {
    try (Tracing tracing =
        Tracing.forTest(
            TracingConfig.off(), "test-project", Map.of(), InMemorySpanExporter.create())) {
      Tracer client = tracing.clientOpenTelemetry().orElseThrow().getTracer("client");
      Span process = client.spanBuilder("orders-sub process").startSpan();
      PubsubMessage m = PubsubMessage.newBuilder().setMessageId("m-1").build();
      assertThat(tracing.deliveryStarted("orders", m)).isNotSameAs(DeliveryObserver.NONE);
      // Not the client's: a message without a trace context, no process span left to take.
      assertThat(tracing.deliveryStarted("orders", m)).isSameAs(DeliveryObserver.NONE);
      process.end();
    }
  }
}
