package dev.pubsubworker.runtime.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.worker.Worker;
import dev.pubsubworker.testservices.SubscriptionSpec;
import dev.pubsubworker.testservices.TcpProxy;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * {@code /readyz} sees the Pub/Sub stream: a real worker pulls from the embedded Pub/Sub server
 * through a TCP proxy; cutting the proxy makes it not ready (with the reason) for as long as the
 * cut lasts, restoring it makes it ready again, and the stream counters show the reconnects.
 */
class PubSubReadinessTest {

  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final Duration OUTAGE = Duration.ofSeconds(12);

  @Test
  void readyz_is_503_while_the_pubsub_stream_is_down_and_200_after_it_returns() throws Exception {
    try (EmulatorWorkers w = new EmulatorWorkers(SubscriptionSpec.defaults());
        TcpProxy proxy = TcpProxy.start(w.pubsub.hostPort())) {
      WorkerConfig config =
          w.config(
              "",
              """
              pubsub-worker.pubsub-emulator-host = "%s"
              pubsub-worker.observability.lock-store-probe-interval = 100ms
              """
                  .formatted(proxy.hostPort()));
      Observability observability = w.observability(config);
      Worker worker = w.create(config, (m, c) -> {}, observability);
      observability.start(worker);
      InetSocketAddress server = observability.httpAddress().orElseThrow();
      worker.start();
      await().atMost(WAIT).until(() -> Http.get(server, "/readyz").status() == 200);

      proxy.cut();
      await().atMost(WAIT).until(() -> Http.get(server, "/readyz").status() == 503);
      assertThat(Http.get(server, "/readyz").body())
          .startsWith("not ready: ")
          .contains("Pub/Sub stream of subscription test failing for")
          .contains("UNAVAILABLE");
      // All through the outage: the client's retries fail at once (the channel is in reconnect
      // backoff), and none of those calls may pass for a stream that is up.
      await()
          .pollInterval(Duration.ofMillis(100))
          .during(OUTAGE)
          .atMost(OUTAGE.plusSeconds(10))
          .until(() -> Http.get(server, "/readyz").status() == 503);
      assertThat(worker.isReady())
          .as("the client's Subscriber still reports running: only the stream shows the outage")
          .isTrue();
      assertThat(Http.get(server, "/healthz").status()).isEqualTo(200);

      proxy.restore();
      await().atMost(WAIT).until(() -> Http.get(server, "/readyz").status() == 200);
      assertThat(Http.get(server, "/readyz").body()).startsWith("ready: ");

      PrometheusText metrics = new PrometheusText(Http.get(server, "/metrics").body());
      assertThat(
              metrics.valueOrZero(
                  "pubsub_worker_pubsub_streams_opened_total", "subscription", "test"))
          .as("the first stream and at least one reconnect")
          .isGreaterThanOrEqualTo(2.0);
      assertThat(
              metrics.valueOrZero(
                  "pubsub_worker_pubsub_stream_errors_total",
                  "subscription",
                  "test",
                  "code",
                  "unavailable"))
          .isGreaterThanOrEqualTo(1.0);
    }
  }
}
