package dev.pubsubworker.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/** The claim retry: its waits come from the guard's capped backoff, one per retry. */
class ClaimAttemptsTest {

  @Test
  void the_claim_retry_is_capped_and_its_worst_case_total_is_bounded() {
    Backoff defaults =
        IdempotencyGuard.claimRetryBackoff(IdempotencyGuard.DEFAULT_CLAIM_RETRY_BACKOFF);
    assertThat(defaults.jitter()).isEqualTo(Backoff.Jitter.NONE);
    assertThat(defaults.delay(0)).isEqualTo(Duration.ofMillis(100));
    assertThat(defaults.delay(1)).isEqualTo(Duration.ofMillis(200));
    assertThat(defaults.maxTotal(IdempotencyGuard.DEFAULT_CLAIM_RETRIES))
        .isEqualTo(Duration.ofMillis(300));
    assertThat(defaults.maxTotal(10)).isEqualTo(Duration.ofMillis(42_700));

    // At the builder's limits (10 retries from 10 s): uncapped, the last wait was 10 s × 2^9 =
    // 85 min and the total 2 h 50 min; capped, every wait is 10 s.
    Backoff limits = IdempotencyGuard.claimRetryBackoff(Duration.ofSeconds(10));
    assertThat(limits.delay(9)).isEqualTo(IdempotencyGuard.CLAIM_RETRY_BACKOFF_CAP);
    assertThat(limits.maxTotal(10)).isEqualTo(Duration.ofSeconds(100));
  }

  @Test
  void each_retry_waits_the_backoffs_delay_for_its_attempt_and_the_last_failure_propagates() {
    List<Integer> attemptsWaited = new ArrayList<>();
    int[] calls = new int[1];
    // A backoff that records each draw: its waits are zero (random 0 with full jitter).
    Backoff recording =
        Backoff.exponential(Duration.ofMillis(1), Duration.ofMillis(8))
            .withRandom(
                () -> {
                  attemptsWaited.add(calls[0]);
                  return 0;
                });
    ClaimAttempts attempts =
        new ClaimAttempts(
            r -> {
              calls[0]++;
              throw new LockBackendException("store down " + calls[0]);
            },
            new GuardEvents(List.of()),
            3,
            recording,
            UnaryOperator.identity());

    assertThatThrownBy(() -> attempts.claim(ClaimRequest.of("k", Duration.ofSeconds(1), "t")))
        .isInstanceOf(LockBackendException.class)
        .hasMessage("store down 4");
    // One wait after each of the first three failures, none after the last.
    assertThat(calls[0]).isEqualTo(4);
    assertThat(attemptsWaited).containsExactly(1, 2, 3);
  }
}
