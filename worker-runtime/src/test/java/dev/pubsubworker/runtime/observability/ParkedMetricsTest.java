package dev.pubsubworker.runtime.observability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pubsubworker.pubsub.Outcome;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The parking metrics: a gauge of deliveries waiting per subscription (at zero when bound), a
 * wait-time timer by outcome, and the three parked outcomes among the settled counters.
 */
class ParkedMetricsTest {

  private final MeterRegistry registry = new SimpleMeterRegistry();
  private final WorkerMetrics metrics = new WorkerMetrics(List.of("orders"));

  @Test
  void the_parked_gauge_follows_the_waiting_deliveries_and_the_wait_is_timed_by_outcome() {
    metrics.bindTo(registry);
    assertThat(parked()).isZero();
    metrics.parked("orders", 1);
    metrics.parked("orders", 1);
    assertThat(parked()).isEqualTo(2);
    metrics.parked("orders", -1);
    metrics.parkedSettled("orders", Outcome.PARKED_THEN_DUPLICATE, Duration.ofSeconds(3));
    metrics.settled("orders", Outcome.PARKED_THEN_DUPLICATE, Duration.ofMillis(4));
    metrics.parked("orders", -1);
    metrics.parkedSettled("orders", Outcome.PARKED_TIMEOUT, Duration.ofMinutes(2));
    metrics.settled("orders", Outcome.PARKED_TIMEOUT, Duration.ZERO);
    assertThat(parked()).isZero();

    Timer duplicate =
        registry
            .get(MetricNames.PARKED_WAIT)
            .tags("subscription", "orders", "outcome", "parked-then-duplicate")
            .timer();
    assertThat(duplicate.count()).isEqualTo(1);
    assertThat(duplicate.totalTime(TimeUnit.SECONDS)).isEqualTo(3.0);
    assertThat(
            registry
                .get(MetricNames.PARKED_WAIT)
                .tags("subscription", "orders", "outcome", "parked-timeout")
                .timer()
                .count())
        .isEqualTo(1);
    for (String outcome :
        List.of("parked-then-processed", "parked-then-duplicate", "parked-timeout")) {
      assertThat(
              registry
                  .get(MetricNames.MESSAGES_SETTLED)
                  .tags("subscription", "orders", "outcome", outcome)
                  .counter()
                  .count())
          .as(outcome)
          .isEqualTo(outcome.equals("parked-then-processed") ? 0 : 1);
    }
  }

  private double parked() {
    return registry.get(MetricNames.MESSAGES_PARKED).tag("subscription", "orders").gauge().value();
  }
}
