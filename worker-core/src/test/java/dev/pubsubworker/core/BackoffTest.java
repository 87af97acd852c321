package dev.pubsubworker.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pubsubworker.core.Backoff.Jitter;
import java.time.Duration;
import java.util.function.DoubleSupplier;
import org.junit.jupiter.api.Test;

/** The one backoff: ceilings, the cap, each jitter's bounds on injected randomness, validation. */
class BackoffTest {

  private static final Duration MS_100 = Duration.ofMillis(100);
  private static final Duration S_1 = Duration.ofSeconds(1);

  /** The largest value a {@link DoubleSupplier} of [0, 1) can return. */
  private static final double ALMOST_ONE = Math.nextDown(1.0);

  private static Backoff fixed(Jitter jitter, double random) {
    return Backoff.exponential(MS_100, S_1).withJitter(jitter).withRandom(() -> random);
  }

  @Test
  void defaults_are_doubling_with_full_jitter() {
    Backoff b = Backoff.exponential(MS_100, S_1);
    assertThat(b.initial()).isEqualTo(MS_100);
    assertThat(b.cap()).isEqualTo(S_1);
    assertThat(b.multiplier()).isEqualTo(2.0).isEqualTo(Backoff.DEFAULT_MULTIPLIER);
    assertThat(b.jitter()).isEqualTo(Jitter.FULL).isEqualTo(Backoff.DEFAULT_JITTER);
  }

  @Test
  void the_ceiling_grows_by_the_multiplier_until_the_cap() {
    Backoff b = fixed(Jitter.NONE, 0);
    assertThat(b.ceiling(0)).isEqualTo(Duration.ofMillis(100));
    assertThat(b.ceiling(1)).isEqualTo(Duration.ofMillis(200));
    assertThat(b.ceiling(2)).isEqualTo(Duration.ofMillis(400));
    assertThat(b.ceiling(3)).isEqualTo(Duration.ofMillis(800));
    assertThat(b.ceiling(4)).isEqualTo(S_1);
    assertThat(b.ceiling(5)).isEqualTo(S_1);

    Backoff tripling = b.withMultiplier(3);
    assertThat(tripling.ceiling(1)).isEqualTo(Duration.ofMillis(300));
    assertThat(tripling.ceiling(2)).isEqualTo(Duration.ofMillis(900));
    assertThat(tripling.ceiling(3)).isEqualTo(S_1);

    Backoff constant = b.withMultiplier(1);
    assertThat(constant.ceiling(0)).isEqualTo(MS_100);
    assertThat(constant.ceiling(1_000)).isEqualTo(MS_100);
  }

  @Test
  void large_attempts_give_the_cap_without_overflow() {
    for (Jitter jitter : Jitter.values()) {
      Backoff b = fixed(jitter, ALMOST_ONE);
      for (int attempt : new int[] {62, 63, 64, 1_000, 1_000_000, Integer.MAX_VALUE}) {
        assertThat(b.ceiling(attempt)).as("%s at %d", jitter, attempt).isEqualTo(S_1);
        assertThat(b.delay(attempt))
            .as("%s at %d", jitter, attempt)
            .isPositive()
            .isLessThanOrEqualTo(S_1)
            .isGreaterThan(Duration.ofMillis(999));
      }
    }
    // The largest accepted parameters overflow long arithmetic long before the cap.
    Backoff wide =
        Backoff.exponential(Backoff.MAX_CAP, Backoff.MAX_CAP)
            .withMultiplier(Double.MAX_VALUE)
            .withJitter(Jitter.NONE);
    assertThat(wide.delay(Integer.MAX_VALUE)).isEqualTo(Backoff.MAX_CAP);
    assertThat(
            Backoff.exponential(Duration.ofNanos(1), Backoff.MAX_CAP)
                .withJitter(Jitter.NONE)
                .delay(100))
        .isEqualTo(Backoff.MAX_CAP);
  }

  @Test
  void no_jitter_waits_the_ceiling_whatever_the_randomness() {
    assertThat(fixed(Jitter.NONE, 0).delay(2)).isEqualTo(Duration.ofMillis(400));
    assertThat(fixed(Jitter.NONE, ALMOST_ONE).delay(2)).isEqualTo(Duration.ofMillis(400));
  }

  @Test
  void full_jitter_spans_zero_to_the_ceiling() {
    assertThat(fixed(Jitter.FULL, 0).delay(2)).isEqualTo(Duration.ZERO);
    assertThat(fixed(Jitter.FULL, 0.5).delay(2)).isEqualTo(Duration.ofMillis(200));
    assertThat(fixed(Jitter.FULL, 0.25).delay(4)).isEqualTo(Duration.ofMillis(250));
    assertThat(fixed(Jitter.FULL, ALMOST_ONE).delay(2))
        .isLessThan(Duration.ofMillis(400))
        .isGreaterThan(Duration.ofMillis(399));
  }

  @Test
  void equal_jitter_spans_half_the_ceiling_to_the_ceiling() {
    assertThat(fixed(Jitter.EQUAL, 0).delay(2)).isEqualTo(Duration.ofMillis(200));
    assertThat(fixed(Jitter.EQUAL, 0.5).delay(2)).isEqualTo(Duration.ofMillis(300));
    assertThat(fixed(Jitter.EQUAL, 0).delay(9)).isEqualTo(Duration.ofMillis(500));
    assertThat(fixed(Jitter.EQUAL, ALMOST_ONE).delay(2))
        .isLessThan(Duration.ofMillis(400))
        .isGreaterThan(Duration.ofMillis(399));
  }

  @Test
  void randomness_outside_zero_to_one_is_clamped_into_the_jitter_bounds() {
    for (double r : new double[] {-1, 1, 7, Double.NaN, Double.POSITIVE_INFINITY}) {
      Duration full = fixed(Jitter.FULL, r).delay(2);
      Duration equal = fixed(Jitter.EQUAL, r).delay(2);
      assertThat(full).as("full, r=%s", r).isBetween(Duration.ZERO, Duration.ofMillis(400));
      assertThat(full).as("full, r=%s", r).isNotEqualTo(Duration.ofMillis(400));
      assertThat(equal)
          .as("equal, r=%s", r)
          .isBetween(Duration.ofMillis(200), Duration.ofMillis(400))
          .isNotEqualTo(Duration.ofMillis(400));
    }
  }

  @Test
  void the_randomness_is_drawn_once_per_delay_and_only_when_jittering() {
    int[] draws = new int[1];
    DoubleSupplier counting =
        () -> {
          draws[0]++;
          return 0.5;
        };
    Backoff b = Backoff.exponential(MS_100, S_1).withRandom(counting);
    b.delay(0);
    b.delay(1);
    assertThat(draws[0]).isEqualTo(2);
    b.withJitter(Jitter.NONE).delay(3);
    assertThat(draws[0]).isEqualTo(2);
  }

  @Test
  void the_default_randomness_stays_in_bounds() {
    Backoff full = Backoff.exponential(MS_100, S_1);
    Backoff equal = full.withJitter(Jitter.EQUAL);
    for (int i = 0; i < 1_000; i++) {
      assertThat(full.delay(i % 8)).isBetween(Duration.ZERO, S_1);
      assertThat(equal.delay(3)).isBetween(Duration.ofMillis(400), Duration.ofMillis(800));
    }
  }

  @Test
  void a_zero_backoff_never_waits() {
    Backoff zero = Backoff.exponential(Duration.ZERO, Duration.ZERO);
    for (Jitter jitter : Jitter.values()) {
      assertThat(zero.withJitter(jitter).delay(0)).isEqualTo(Duration.ZERO);
      assertThat(zero.withJitter(jitter).delay(Integer.MAX_VALUE)).isEqualTo(Duration.ZERO);
    }
    // Zero initial with a positive cap: 0 × multiplier^n stays 0 (no NaN from 0 × infinity).
    assertThat(Backoff.exponential(Duration.ZERO, S_1).withJitter(Jitter.NONE).delay(5_000))
        .isEqualTo(Duration.ZERO);
  }

  @Test
  void max_total_is_the_sum_of_the_ceilings() {
    Backoff b = fixed(Jitter.FULL, 0.3);
    assertThat(b.maxTotal(0)).isEqualTo(Duration.ZERO);
    assertThat(b.maxTotal(1)).isEqualTo(MS_100);
    // 100 + 200 + 400 + 800 + 1000 + 1000
    assertThat(b.maxTotal(6)).isEqualTo(Duration.ofMillis(3_500));
    Duration sum = Duration.ZERO;
    for (int i = 0; i < 6; i++) {
      sum = sum.plus(b.withJitter(Jitter.NONE).delay(i));
    }
    assertThat(sum).isEqualTo(b.maxTotal(6));
    assertThatThrownBy(() -> b.maxTotal(-1)).hasMessage("retries must be >= 0, but was -1");
  }

  @Test
  void parameters_are_validated_with_messages_naming_them() {
    assertThatThrownBy(() -> Backoff.exponential(Duration.ofMillis(-1), S_1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("initial must be between PT0S and PT24H, but was PT-0.001S");
    assertThatThrownBy(() -> Backoff.exponential(S_1, MS_100))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("cap must be between PT1S and PT24H, but was PT0.1S");
    assertThatThrownBy(() -> Backoff.exponential(MS_100, Duration.ofDays(2)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("cap must be between PT0.1S and PT24H, but was PT48H");
    assertThatThrownBy(() -> Backoff.exponential(null, S_1))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("initial");
    assertThatThrownBy(() -> Backoff.exponential(MS_100, null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("cap");
    Backoff b = Backoff.exponential(MS_100, S_1);
    for (double bad : new double[] {0.99, 0, -2, Double.NaN, Double.POSITIVE_INFINITY}) {
      assertThatThrownBy(() -> b.withMultiplier(bad))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("multiplier must be a finite number >= 1, but was " + bad);
    }
    assertThatThrownBy(() -> b.withJitter(null)).hasMessage("jitter");
    assertThatThrownBy(() -> b.withRandom(null)).hasMessage("random");
    assertThatThrownBy(() -> b.delay(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("attempt must be >= 0, but was -1");
    assertThatThrownBy(() -> b.ceiling(-1)).hasMessage("attempt must be >= 0, but was -1");
  }

  @Test
  void withers_copy_and_equality_compares_the_parameters() {
    Backoff b = Backoff.exponential(MS_100, S_1);
    Backoff equal = b.withJitter(Jitter.EQUAL);
    assertThat(b.jitter()).isEqualTo(Jitter.FULL);
    assertThat(equal).isNotEqualTo(b);
    assertThat(b.withRandom(() -> 0.1)).isEqualTo(b).hasSameHashCodeAs(b);
    assertThat(b.withMultiplier(3)).isNotEqualTo(b);
    assertThat(Backoff.exponential(MS_100, Duration.ofSeconds(2))).isNotEqualTo(b);
    assertThat(b.toString())
        .isEqualTo("Backoff{initial=PT0.1S, multiplier=2.0, cap=PT1S, jitter=FULL}");
  }
}
