package dev.pubsubworker.testservices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class SubscriptionSpecTest {

  @Test
  void defaults_are_plain() {
    SubscriptionSpec spec = SubscriptionSpec.defaults();

    assertThat(spec.namePrefix()).isEqualTo("test");
    assertThat(spec.ackDeadline()).isEqualTo(Duration.ofSeconds(10));
    assertThat(spec.exactlyOnceDelivery()).isFalse();
    assertThat(spec.messageOrdering()).isFalse();
    assertThat(spec.deadLetterMaxDeliveryAttempts()).isEmpty();
    assertThat(spec.retryBackoff()).isEmpty();
  }

  @Test
  void to_builder_keeps_every_value() {
    SubscriptionSpec spec =
        SubscriptionSpec.newBuilder()
            .setNamePrefix("orders")
            .setAckDeadline(Duration.ofSeconds(30))
            .setExactlyOnceDelivery(true)
            .setMessageOrdering(true)
            .setDeadLetterPolicy(5)
            .setRetryPolicy(Duration.ZERO, Duration.ofSeconds(10))
            .build();

    assertThat(spec.toBuilder().build()).hasToString(spec.toString());
  }

  @Test
  void setters_reject_values_pub_sub_would_reject_and_say_what_was_given() {
    SubscriptionSpec.Builder builder = SubscriptionSpec.newBuilder();

    assertThatThrownBy(() -> builder.setAckDeadline(Duration.ofSeconds(5)))
        .hasMessage("ackDeadline must be whole seconds within 10..600 s, but was PT5S");
    assertThatThrownBy(() -> builder.setAckDeadline(Duration.ofMillis(10_500)))
        .hasMessage("ackDeadline must be whole seconds within 10..600 s, but was PT10.5S");
    assertThatThrownBy(() -> builder.setDeadLetterPolicy(4))
        .hasMessage("maxDeliveryAttempts must be within 5..100, but was 4");
    assertThatThrownBy(() -> builder.setDeadLetterPolicy(101))
        .hasMessage("maxDeliveryAttempts must be within 5..100, but was 101");
    assertThatThrownBy(() -> builder.setRetryPolicy(Duration.ofSeconds(5), Duration.ofSeconds(1)))
        .hasMessage("minimum backoff must not exceed maximum, but was PT5S > PT1S");
    assertThatThrownBy(() -> builder.setRetryPolicy(Duration.ZERO, Duration.ofSeconds(601)))
        .hasMessage("backoff must lie in 0..600 s, but was PT0S..PT10M1S");
    assertThatThrownBy(() -> builder.setNamePrefix("Orders"))
        .hasMessage(
            "namePrefix must match [a-z][a-z0-9_]* with at most 30 characters, but was 'Orders'");
  }
}
