package dev.pubsubworker.pubsub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pubsubworker.testkit.ManualTime;
import java.time.Clock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@link RepeatLimiter} on a manual clock. */
class RepeatLimiterTest {

  private final ManualTime time = new ManualTime();
  private final RepeatLimiter limiter = new RepeatLimiter(Duration.ofSeconds(10), time.clock());

  @Test
  void the_first_line_of_a_kind_is_written_then_one_per_interval_with_the_count_held_back() {
    assertThat(limiter.check("a")).isEqualTo(new RepeatLimiter.Decision(true, 0));
    for (int i = 0; i < 99; i++) {
      assertThat(limiter.check("a").write()).isFalse();
    }
    time.advance(Duration.ofMillis(9_999));
    assertThat(limiter.check("a").write()).as("still inside the interval").isFalse();
    time.advance(Duration.ofMillis(1));
    RepeatLimiter.Decision next = limiter.check("a");
    assertThat(next).isEqualTo(new RepeatLimiter.Decision(true, 100));
    assertThat(next.suppressedNote())
        .isEqualTo(" (100 similar line(s) suppressed since the last one)");

    // A quiet interval: the next line is written and says nothing was held back.
    time.advance(Duration.ofSeconds(30));
    RepeatLimiter.Decision quiet = limiter.check("a");
    assertThat(quiet).isEqualTo(new RepeatLimiter.Decision(true, 0));
    assertThat(quiet.suppressedNote()).isEmpty();
  }

  @Test
  void kinds_are_limited_independently() {
    assertThat(limiter.check("a").write()).isTrue();
    assertThat(limiter.check("b").write()).isTrue();
    assertThat(limiter.check("a").write()).isFalse();
    assertThat(limiter.check("b").write()).isFalse();
  }

  @Test
  void the_interval_must_be_positive() {
    Clock clock = time.clock();
    assertThatThrownBy(() -> new RepeatLimiter(Duration.ZERO, clock))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("interval must be positive, but was PT0S");
  }
}
