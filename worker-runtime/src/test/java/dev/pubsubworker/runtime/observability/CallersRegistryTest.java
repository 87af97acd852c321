package dev.pubsubworker.runtime.observability;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.store.LockStoreCalls;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The registry can be the application's: the worker's meters go there (and only they: the JVM's are
 * the application's to bind), {@code /metrics} serves it only when it is a Prometheus one, and
 * closing the worker's observability leaves it open.
 */
class CallersRegistryTest {

  private static final WorkerConfig CONFIG =
      WorkerConfig.load(
          ConfigFactory.parseString(
                  "pubsub-worker { project-id = p, observability.http-port = 0,"
                      + " subscriptions.orders.handler = orders }")
              .withFallback(ConfigFactory.defaultReference())
              .resolve());

  private static final WorkerStatus RUNNING =
      new WorkerStatus() {
        @Override
        public State state() {
          return State.RUNNING;
        }

        @Override
        public Optional<Throwable> failure() {
          return Optional.empty();
        }
      };

  @Test
  void the_workers_meters_go_to_the_callers_registry_without_the_jvms() {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    try (Observability obs = Observability.create(CONFIG, registry)) {
      assertThat(obs.registry()).isSameAs(registry);
      obs.dispatchListeners().get(0).settled("orders", Outcome.PROCESSED, Duration.ofMillis(3));
      obs.guardListeners("orders").get(0).claimed("orders:po-1", 1, false);

      assertThat(
              registry
                  .find(MetricNames.MESSAGES_SETTLED)
                  .tag(MetricNames.SUBSCRIPTION, "orders")
                  .tag(MetricNames.OUTCOME, MetricNames.tagValue(Outcome.PROCESSED))
                  .counter()
                  .count())
          .isEqualTo(1.0);
      assertThat(registry.find(MetricNames.GUARD_CLAIMS).counters())
          .anySatisfy(c -> assertThat(c.count()).isEqualTo(1.0));
      assertThat(registry.getMeters())
          .noneMatch(m -> m.getId().getName().startsWith("jvm."))
          .noneMatch(m -> m.getId().getName().startsWith("process."));
    }
    assertThat(registry.isClosed()).as("the caller's registry stays open").isFalse();
  }

  @Test
  void metrics_is_served_for_a_callers_prometheus_registry_and_refused_for_another()
      throws Exception {
    PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    ObservabilityHttpServer server = serve(prometheus);
    try {
      Http.Answer scraped = Http.get(server.address(), "/metrics");
      assertThat(scraped.status()).isEqualTo(200);
      assertThat(scraped.body()).contains("pubsub_worker_messages_received_total");
    } finally {
      server.stop();
    }
    server = serve(new SimpleMeterRegistry());
    try {
      Http.Answer refused = Http.get(server.address(), "/metrics");
      assertThat(refused.status()).isEqualTo(404);
      assertThat(refused.body())
          .contains("the worker's metrics go to the application's SimpleMeterRegistry");
      assertThat(Http.get(server.address(), "/healthz").status()).isEqualTo(200);
    } finally {
      server.stop();
    }
  }

  /** The HTTP server over the worker's meters in {@code registry}. */
  private static ObservabilityHttpServer serve(MeterRegistry registry) {
    new WorkerMetrics(CONFIG.subscriptions().keySet()).bindTo(registry);
    Clock clock = Clock.systemUTC();
    LockStoreFreshness store = new LockStoreFreshness(clock);
    store.answered();
    Health health =
        new Health(
            RUNNING,
            store,
            Duration.ofSeconds(30),
            clock,
            new LockStoreCalls(clock),
            Duration.ofSeconds(60));
    return ObservabilityHttpServer.start(new InetSocketAddress("127.0.0.1", 0), registry, health);
  }
}
