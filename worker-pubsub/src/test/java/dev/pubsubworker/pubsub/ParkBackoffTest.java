package dev.pubsubworker.pubsub;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The parked delivery's retry schedule: doubling, capped, jittered, bounded by lease and deadline.
 */
class ParkBackoffTest {

  private static final Duration FAR = Duration.ofHours(1);

  @Test
  void without_jitter_it_starts_at_200ms_and_doubles_up_to_the_max_poll() {
    assertThat(ParkBackoff.delay(0, null, FAR, 0)).isEqualTo(Duration.ofMillis(200));
    assertThat(ParkBackoff.delay(1, null, FAR, 0)).isEqualTo(Duration.ofMillis(400));
    assertThat(ParkBackoff.delay(2, null, FAR, 0)).isEqualTo(Duration.ofMillis(800));
    assertThat(ParkBackoff.delay(4, null, FAR, 0)).isEqualTo(Duration.ofMillis(3200));
    assertThat(ParkBackoff.delay(5, null, FAR, 0)).isEqualTo(ParkBackoff.MAX_POLL);
    assertThat(ParkBackoff.delay(500, null, FAR, 0)).isEqualTo(ParkBackoff.MAX_POLL);
  }

  @Test
  void the_jitter_adds_at_most_the_floor_plus_a_fifth() {
    assertThat(ParkBackoff.delay(0, null, FAR, 0.999_999))
        .isGreaterThan(Duration.ofMillis(200))
        .isLessThanOrEqualTo(Duration.ofMillis(200 + 50 + 40));
    assertThat(ParkBackoff.delay(9, null, FAR, 0.999_999))
        .isLessThanOrEqualTo(ParkBackoff.MAX_POLL.plusMillis(50 + 1000));
  }

  @Test
  void it_never_waits_past_the_holders_lease_expiry_plus_jitter() {
    assertThat(ParkBackoff.delay(5, Duration.ofMillis(700), FAR, 0))
        .isEqualTo(Duration.ofMillis(700));
    assertThat(ParkBackoff.delay(5, Duration.ofMillis(700), FAR, 0.999_999))
        .isLessThanOrEqualTo(Duration.ofMillis(700 + 50 + 140));
    // A lease that already lapsed: retry after the jitter alone.
    assertThat(ParkBackoff.delay(3, Duration.ofMillis(-5), FAR, 0)).isEqualTo(Duration.ZERO);
    assertThat(ParkBackoff.delay(3, Duration.ofMillis(-5), FAR, 0.5))
        .isEqualTo(Duration.ofMillis(25));
  }

  @Test
  void the_first_retry_after_the_lease_lapsed_comes_at_most_max_lateness_after_it() {
    // The claim-retry term of the time to reprocess after a crash (CrashRecovery).
    assertThat(ParkBackoff.MAX_LATENESS).isEqualTo(Duration.ofMillis(1050));
    java.util.Random random = new java.util.Random(42);
    Duration latest = Duration.ZERO;
    for (long expiry = 0; expiry <= 40_000; expiry += 37) {
      long now = 0;
      int polls = 0;
      while (now < expiry) {
        now +=
            ParkBackoff.delay(polls++, Duration.ofMillis(expiry - now), FAR, random.nextDouble())
                .toMillis();
      }
      Duration late = Duration.ofMillis(now - expiry);
      latest = late.compareTo(latest) > 0 ? late : latest;
    }
    assertThat(latest).isLessThanOrEqualTo(ParkBackoff.MAX_LATENESS);
    // The worst case itself: a poll cut down from the longest one to a lease lapsing just then.
    assertThat(ParkBackoff.delay(9, ParkBackoff.MAX_POLL, FAR, 0.999_999))
        .isLessThanOrEqualTo(ParkBackoff.MAX_POLL.plus(ParkBackoff.MAX_LATENESS))
        .isGreaterThan(ParkBackoff.MAX_POLL.plus(ParkBackoff.MAX_LATENESS).minusMillis(1));
  }

  @Test
  void it_never_waits_past_the_deadline() {
    assertThat(ParkBackoff.delay(5, null, Duration.ofMillis(120), 0.9))
        .isEqualTo(Duration.ofMillis(120));
    assertThat(ParkBackoff.delay(0, null, Duration.ZERO, 0.9)).isEqualTo(Duration.ZERO);
  }
}
