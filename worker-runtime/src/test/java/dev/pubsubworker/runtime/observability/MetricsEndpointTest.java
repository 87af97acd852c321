package dev.pubsubworker.runtime.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.testing.TestPubSub;
import dev.pubsubworker.runtime.worker.Worker;
import dev.pubsubworker.testservices.SubscriptionSpec;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The metrics of a scripted run on Pub/Sub (the embedded server and Google's emulator), read from
 * the real {@code /metrics} endpoint: N orders, D republishes of some of them under the same
 * business key, one handler failure, one handler long enough for the heartbeat, on a subscription
 * with exactly-once delivery.
 */
class MetricsEndpointTest {

  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final String SUB = "test";
  private static final int ORDERS = 5;
  private static final int REPUBLISHED = 3;

  @ParameterizedTest(name = "on {0}")
  @EnumSource(TestPubSub.Server.class)
  void a_scripted_run_shows_in_the_scraped_counters(TestPubSub.Server pubsub) throws Exception {
    CountDownLatch releaseSlow = new CountDownLatch(1);
    AtomicInteger failingCalls = new AtomicInteger();
    MessageHandler handler =
        (message, context) -> {
          String order = message.attribute("order_id").orElseThrow();
          if (order.equals("po-4") && failingCalls.incrementAndGet() == 1) {
            throw new IllegalStateException("supplier timed out");
          }
          if (order.equals("po-5") && !releaseSlow.await(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the test never released the slow order");
          }
        };
    SubscriptionSpec spec =
        SubscriptionSpec.newBuilder()
            .setExactlyOnceDelivery(true)
            .setRetryPolicy(Duration.ofSeconds(1), Duration.ofSeconds(2))
            .build();
    try (EmulatorWorkers w = new EmulatorWorkers(pubsub.pubsub(), spec)) {
      WorkerConfig config =
          w.config(
              "key = \"template:orders:{order_id}\"\nlease = 1500ms\nexecutor-threads = 3", "");
      Observability observability = w.observability(config);
      Worker worker = w.create(config, handler, observability);
      observability.start(worker);
      worker.start();
      InetSocketAddress server = observability.httpAddress().orElseThrow();

      PrometheusText before = scrape(server);
      // Every configured subscription's counters exist at zero before any message.
      for (Outcome o : Outcome.values()) {
        assertThat(settled(before, MetricNames.tagValue(o))).isZero();
      }
      assertThat(before.value("pubsub_worker_messages_received_total", "subscription", SUB))
          .hasValue(0);

      for (int i = 1; i <= ORDERS; i++) {
        w.publish("{\"order\":" + i + "}", Map.of("order_id", "po-" + i));
      }
      // po-5 is held until the heartbeat has extended its lease (every lease/3 = 500 ms); the
      // extension happens on the heartbeat thread and is still counted under its subscription.
      await()
          .atMost(WAIT)
          .until(
              () ->
                  scrape(server)
                          .valueOrZero("pubsub_worker_lease_extensions_total", "subscription", SUB)
                      >= 1);
      releaseSlow.countDown();
      await().atMost(WAIT).until(() -> settled(scrape(server), "processed") == ORDERS);
      for (int i = 1; i <= REPUBLISHED; i++) {
        w.publish("{\"order\":" + i + "}", Map.of("order_id", "po-" + i));
      }
      int acks = ORDERS + REPUBLISHED;
      await()
          .atMost(WAIT)
          .until(
              () -> {
                PrometheusText t = scrape(server);
                return settled(t, "duplicate") == REPUBLISHED
                    && t.valueOrZero(
                            "pubsub_worker_ack_responses_total",
                            "subscription",
                            SUB,
                            "response",
                            "successful")
                        == acks;
              });

      PrometheusText t = scrape(server);
      assertThat(t.value("pubsub_worker_messages_received_total", "subscription", SUB))
          .hasValue(ORDERS + REPUBLISHED + 1);
      assertThat(settled(t, "processed")).isEqualTo(ORDERS);
      assertThat(settled(t, "duplicate")).isEqualTo(REPUBLISHED);
      assertThat(settled(t, "failed")).isEqualTo(1);
      for (String none :
          List.of(
              "in-progress",
              "unkeyed",
              "unguarded",
              "fenced-out",
              "complete-failed",
              "fingerprint-rejected",
              "store-failed",
              "abandoned")) {
        assertThat(settled(t, none)).as(none).isZero();
      }
      assertThat(handlerCount(t, "processed")).isEqualTo(ORDERS);
      assertThat(handlerCount(t, "duplicate")).isEqualTo(REPUBLISHED);
      assertThat(handlerCount(t, "failed")).isEqualTo(1);
      assertThat(t.find("pubsub_worker_handler_duration_seconds_bucket", "outcome", "processed"))
          .as("histogram buckets for dashboards")
          .hasSizeGreaterThan(10);
      assertThat(t.value("pubsub_worker_messages_in_flight", "subscription", SUB)).hasValue(0);
      for (String response :
          List.of("invalid", "permission-denied", "failed-precondition", "other")) {
        assertThat(
                t.value(
                    "pubsub_worker_ack_responses_total", "subscription", SUB, "response", response))
            .hasValue(0);
      }
      // Five first claims; the failed order's retry reclaimed its released key (fence 3).
      assertThat(t.value("pubsub_worker_guard_claims_total", "subscription", SUB, "kind", "first"))
          .hasValue(ORDERS);
      assertThat(
              t.value("pubsub_worker_guard_claims_total", "subscription", SUB, "kind", "reclaim"))
          .hasValue(1);
      assertThat(t.find("pubsub_worker_lease_lost_total", "subscription", SUB))
          .extracting(PrometheusText.Sample::value)
          .containsOnly(0.0);
      assertThat(t.value("pubsub_worker_guard_fenced_out_total", "subscription", SUB)).hasValue(0);
      assertThat(t.value("pubsub_worker_guard_complete_failed_total", "subscription", SUB))
          .hasValue(0);
      assertThat(t.value("pubsub_worker_guard_fingerprint_mismatches_total", "subscription", SUB))
          .hasValue(0);
      // Lock-store calls: one claim per delivery, DONE per processed order, one release after
      // the failure, at least one extension, and the readiness probe's reads.
      assertThat(storeCalls(t, "claim", "success")).isEqualTo(ORDERS + REPUBLISHED + 1);
      assertThat(storeCalls(t, "complete", "success")).isEqualTo(ORDERS);
      assertThat(storeCalls(t, "release", "success")).isEqualTo(1);
      assertThat(storeCalls(t, "extend", "success")).isGreaterThanOrEqualTo(1);
      assertThat(storeCalls(t, "inspect", "success")).isGreaterThanOrEqualTo(1);
      assertThat(t.find("pubsub_worker_lock_store_calls_seconds_count", "result", "failure"))
          .isEmpty();
      // JVM and process binders.
      assertThat(t.find("jvm_memory_used_bytes")).isNotEmpty();
      assertThat(t.find("jvm_threads_live_threads")).isNotEmpty();
      assertThat(t.find("jvm_classes_loaded_classes")).isNotEmpty();
      assertThat(t.find("system_cpu_count")).isNotEmpty();
      assertThat(t.find("process_uptime_seconds")).isNotEmpty();
      assertThat(t.find("jvm_gc_memory_allocated_bytes_total")).isNotEmpty();
    }
  }

  @Test
  void metrics_are_served_in_the_prometheus_text_format_and_other_paths_are_refused() {
    try (EmulatorWorkers w = new EmulatorWorkers(SubscriptionSpec.defaults())) {
      WorkerConfig config = w.config("", "");
      Observability observability = w.observability(config);
      Worker worker = w.create(config, (m, c) -> {}, observability);
      observability.start(worker);
      InetSocketAddress server = observability.httpAddress().orElseThrow();
      assertThat(server.getPort()).isPositive();

      Http.Answer metrics = Http.get(server, "/metrics");
      assertThat(metrics.status()).isEqualTo(200);
      assertThat(metrics.contentType()).isEqualTo("text/plain; version=0.0.4; charset=utf-8");
      assertThat(metrics.body()).contains("# TYPE pubsub_worker_messages_received_total counter");

      assertThat(Http.send(server, "/metrics", "HEAD").status()).isEqualTo(200);
      assertThat(Http.send(server, "/metrics", "POST").status()).isEqualTo(405);
      assertThat(Http.get(server, "/").status()).isEqualTo(404);
      assertThat(Http.get(server, "/metricsx").status()).isEqualTo(404);
      assertThat(Http.get(server, "/healthz/x").status()).isEqualTo(404);

      observability.close();
      org.assertj.core.api.Assertions.assertThatThrownBy(() -> Http.get(server, "/healthz"))
          .isInstanceOf(java.io.UncheckedIOException.class);
    }
  }

  private static PrometheusText scrape(InetSocketAddress server) {
    Http.Answer a = Http.get(server, "/metrics");
    assertThat(a.status()).isEqualTo(200);
    return new PrometheusText(a.body());
  }

  private static double settled(PrometheusText t, String outcome) {
    return t.value("pubsub_worker_messages_settled_total", "subscription", SUB, "outcome", outcome)
        .orElseThrow();
  }

  private static double handlerCount(PrometheusText t, String outcome) {
    return t.value(
            "pubsub_worker_handler_duration_seconds_count", "subscription", SUB, "outcome", outcome)
        .orElseThrow();
  }

  private static double storeCalls(PrometheusText t, String verb, String result) {
    return t.valueOrZero(
        "pubsub_worker_lock_store_calls_seconds_count", "verb", verb, "result", result);
  }
}
