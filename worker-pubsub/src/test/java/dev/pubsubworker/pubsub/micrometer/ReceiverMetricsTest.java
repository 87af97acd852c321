package dev.pubsubworker.pubsub.micrometer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.cloud.pubsub.v1.AckResponse;
import dev.pubsubworker.core.GuardListener;
import dev.pubsubworker.pubsub.Outcome;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link ReceiverMetrics}: every meter under the prefix with the caller's tags, zeros at binding,
 * guard events under their subscription, timers in seconds, never throwing.
 */
class ReceiverMetricsTest {

  private final MeterRegistry registry = new SimpleMeterRegistry();
  private final ReceiverMetrics metrics =
      ReceiverMetrics.of(List.of("orders"), Tags.of("app", "shop"));

  @Test
  void every_meter_carries_the_callers_tags_and_the_subscriptions_are_at_zero_when_bound() {
    metrics.bindTo(registry);
    for (Outcome o : Outcome.values()) {
      assertThat(
              registry
                  .get(ReceiverMetricNames.MESSAGES_SETTLED)
                  .tags(
                      "app",
                      "shop",
                      "subscription",
                      "orders",
                      "outcome",
                      ReceiverMetricNames.tagValue(o))
                  .counter()
                  .count())
          .isZero();
    }
    assertThat(registry.getMeters())
        .isNotEmpty()
        .allSatisfy(
            m -> {
              assertThat(m.getId().getName()).startsWith(ReceiverMetricNames.PREFIX);
              assertThat(m.getId().getTag("app")).isEqualTo("shop");
            });
  }

  @Test
  void receiver_and_guard_events_are_recorded_per_subscription_timers_in_seconds() {
    metrics.bindTo(registry);
    metrics.received("orders");
    metrics.settled("orders", Outcome.PARKED_THEN_PROCESSED, Duration.ofMillis(1500));
    metrics.parkedSettled("orders", Outcome.PARKED_THEN_PROCESSED, Duration.ofSeconds(1));
    metrics.ackResponse("refunds", AckResponse.INVALID);
    GuardListener guard = metrics.guardListener("orders");
    guard.claimed("k", 2, true);
    guard.backendCall(GuardListener.Verb.CLAIM, Duration.ofMillis(3), true);
    metrics.recordStoreCall("inspect", Duration.ofMillis(1), false);

    assertThat(
            registry
                .get(ReceiverMetricNames.MESSAGES_RECEIVED)
                .tags("subscription", "orders")
                .counter()
                .count())
        .isEqualTo(1);
    var handler =
        registry
            .get(ReceiverMetricNames.HANDLER_DURATION)
            .tags("outcome", "parked-then-processed")
            .timer();
    assertThat(handler.getId().getBaseUnit()).isEqualTo("seconds");
    assertThat(handler.totalTime(java.util.concurrent.TimeUnit.MILLISECONDS)).isEqualTo(1500);
    assertThat(registry.get(ReceiverMetricNames.PARKED_WAIT).timer().count()).isEqualTo(1);
    assertThat(
            registry
                .get(ReceiverMetricNames.ACK_RESPONSES)
                .tags("subscription", "refunds", "response", "invalid")
                .counter()
                .count())
        .as("a subscription not named up front appears with its first event")
        .isEqualTo(1);
    assertThat(
            registry
                .get(ReceiverMetricNames.GUARD_CLAIMS)
                .tags("subscription", "orders", "kind", "reclaim")
                .counter()
                .count())
        .isEqualTo(1);
    assertThat(
            registry
                .get(ReceiverMetricNames.LOCK_STORE_CALLS)
                .tags("app", "shop", "verb", "claim", "result", "success")
                .timer()
                .count())
        .isEqualTo(1);
    assertThat(
            registry
                .get(ReceiverMetricNames.LOCK_STORE_CALLS)
                .tags("verb", "inspect", "result", "failure")
                .timer()
                .count())
        .isEqualTo(1);
  }

  @Test
  void nothing_throws_before_binding_or_on_nonsense_and_tags_may_not_shadow_our_own() {
    assertThatCode(
            () -> {
              metrics.received("orders");
              metrics.guardListener("orders").leaseExtended("k", 1);
            })
        .doesNotThrowAnyException();
    metrics.bindTo(registry);
    assertThatCode(() -> metrics.settled("orders", null, Duration.ofMillis(1)))
        .doesNotThrowAnyException();
    assertThatThrownBy(() -> metrics.bindTo(new SimpleMeterRegistry()))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> ReceiverMetrics.of(List.of(), Tags.of("outcome", "x")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("tag outcome");
  }

  @Test
  void every_name_has_the_prefix() throws Exception {
    for (Field f : ReceiverMetricNames.class.getFields()) {
      if (Modifier.isStatic(f.getModifiers())
          && f.getType() == String.class
          && ((String) f.get(null)).contains(".")) {
        assertThat((String) f.get(null)).as(f.getName()).startsWith(ReceiverMetricNames.PREFIX);
      }
    }
  }
}
