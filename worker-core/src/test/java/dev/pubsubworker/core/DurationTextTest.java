package dev.pubsubworker.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The one human duration format of config errors and log lines. */
class DurationTextTest {

  @Test
  void the_largest_whole_unit_is_used() {
    assertThat(DurationText.of(Duration.ofMinutes(2))).isEqualTo("2m");
    assertThat(DurationText.of(Duration.ofSeconds(30))).isEqualTo("30s");
    assertThat(DurationText.of(Duration.ofSeconds(90))).isEqualTo("90s");
    assertThat(DurationText.of(Duration.ofMillis(250))).isEqualTo("250ms");
    assertThat(DurationText.of(Duration.ofMillis(1500))).isEqualTo("1500ms");
    assertThat(DurationText.of(Duration.ofHours(1))).isEqualTo("1h");
    assertThat(DurationText.of(Duration.ofMinutes(90))).isEqualTo("90m");
  }

  @Test
  void days_only_from_two_days_so_a_day_reads_as_24h() {
    assertThat(DurationText.of(Duration.ofHours(24))).isEqualTo("24h");
    assertThat(DurationText.of(Duration.ofDays(2))).isEqualTo("2d");
    assertThat(DurationText.of(Duration.ofDays(7))).isEqualTo("7d");
    assertThat(DurationText.of(Duration.ofHours(36))).isEqualTo("36h");
  }

  @Test
  void fractions_of_a_millisecond_and_zero_are_in_nanoseconds() {
    assertThat(DurationText.of(Duration.ZERO)).isEqualTo("0ns");
    assertThat(DurationText.of(Duration.ofNanos(1500))).isEqualTo("1500ns");
    assertThat(DurationText.of(Duration.ofMillis(1).plusNanos(1))).isEqualTo("1000001ns");
  }

  @Test
  void negative_durations_keep_their_sign() {
    assertThat(DurationText.of(Duration.ofMillis(-1))).isEqualTo("-1ms");
    assertThat(DurationText.of(Duration.ofMinutes(-2))).isEqualTo("-2m");
  }

  @Test
  void null_is_refused() {
    assertThatThrownBy(() -> DurationText.of(null)).isInstanceOf(NullPointerException.class);
  }
}
