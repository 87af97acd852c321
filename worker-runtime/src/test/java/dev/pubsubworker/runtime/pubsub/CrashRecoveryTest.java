package dev.pubsubworker.runtime.pubsub;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import dev.pubsubworker.runtime.config.SubscriptionConfig;
import dev.pubsubworker.runtime.config.WorkerConfig;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The worst-case wait after a crash that a subscription's settings imply, as {@code check-config}
 * prints it: max(ack deadline, lease) + the parked claim retry's lateness, with the ack deadline
 * the client sends ({@link AckDeadlines}). The end-to-end proof that the shipped config keeps it is
 * {@code CrashRecoveryEndToEndTest}.
 */
class CrashRecoveryTest {

  /** Subscription {@code s} with {@code settings} over the shipped defaults (reference.conf). */
  static SubscriptionConfig subscription(String settings) {
    return WorkerConfig.load(
            ConfigFactory.parseString(
                    "pubsub-worker { project-id = p, subscriptions { s { handler = h, "
                        + settings
                        + " } } }")
                .withFallback(ConfigFactory.defaultReference())
                .resolve())
        .subscriptions()
        .get("s");
  }

  @Test
  void the_shipped_config_brings_every_message_back_about_a_minute_after_a_crash() {
    CrashRecovery r = CrashRecovery.of(subscription(""));
    assertThat(r.streamAckDeadline()).isEqualTo(Duration.ofSeconds(60));
    assertThat(r.ackDeadline()).isEqualTo(Duration.ofSeconds(60));
    assertThat(r.keyHold()).isEqualTo(Duration.ofSeconds(30));
    assertThat(r.claimRetry()).isEqualTo(Duration.ofMillis(1050));
    assertThat(r.plusRetryBackoff()).isFalse();
    assertThat(r.worstCase()).isEqualTo(Duration.ofMillis(61_050));
    assertThat(r.describe())
        .isEqualTo(
            "within 61.05s = max(ack deadline 60s, lease 30s) + claim retry 1.05s; stream ack"
                + " deadline 60s, extensions 10s..60s, 60s with exactly-once");
  }

  @Test
  void the_old_default_of_600s_per_call_would_cost_ten_minutes() {
    CrashRecovery r = CrashRecovery.of(subscription("max-ack-extension-per-call = 600s"));
    assertThat(r.streamAckDeadline()).isEqualTo(Duration.ofSeconds(600));
    assertThat(r.worstCase()).isEqualTo(Duration.ofMillis(601_050));
  }

  @Test
  void a_lease_longer_than_the_ack_deadline_is_what_bounds_it() {
    CrashRecovery r = CrashRecovery.of(subscription("lease = 90s"));
    assertThat(r.worstCase()).isEqualTo(Duration.ofMillis(91_050));
    assertThat(r.describe()).startsWith("within 91.05s = max(ack deadline 60s, lease 90s) + ");
  }

  @Test
  void exactly_once_keeps_its_minimum_extension() {
    assertThat(CrashRecovery.of(subscription("exactly-once = on")).describe())
        .endsWith("stream ack deadline 60s, extensions 60s (exactly-once)");
    CrashRecovery lower =
        CrashRecovery.of(
            subscription(
                "exactly-once = on, min-ack-extension = 20s, max-ack-extension-per-call = 45s,"
                    + " lease = 10s"));
    assertThat(lower.exactlyOnceExtension()).isEqualTo(Duration.ofSeconds(20));
    assertThat(lower.worstCase()).isEqualTo(Duration.ofMillis(46_050));
    assertThat(lower.describe())
        .isEqualTo(
            "within 46.05s = max(ack deadline 45s, lease 10s) + claim retry 1.05s; stream ack"
                + " deadline 45s, extensions 20s..45s (exactly-once)");
    // Equal bounds: the client's own exactly-once minimum, min(60s, maximum), is the configured
    // one.
    assertThat(
            CrashRecovery.of(
                    subscription("min-ack-extension = 30s, max-ack-extension-per-call = 30s"))
                .exactlyOnceExtension())
        .isEqualTo(Duration.ofSeconds(30));
    assertThat(CrashRecovery.of(subscription("exactly-once = off")).describe())
        .endsWith("stream ack deadline 60s, extensions 10s..60s");
    assertThat(CrashRecovery.of(subscription("")).withExactlyOnce(true).describe())
        .endsWith("extensions 60s (exactly-once)");
  }

  @Test
  void without_a_guard_only_the_ack_deadline_counts() {
    CrashRecovery r = CrashRecovery.of(subscription("guard = none, lease = 5m"));
    assertThat(r.worstCase()).isEqualTo(Duration.ofSeconds(60));
    assertThat(r.describe()).startsWith("within 60s = ack deadline 60s (guard none); ");
  }

  @Test
  void an_in_progress_max_wait_below_the_lease_adds_the_retry_backoff() {
    for (String wait : new String[] {"0s", "29s"}) {
      CrashRecovery r = CrashRecovery.of(subscription("in-progress-max-wait = " + wait));
      assertThat(r.plusRetryBackoff()).as(wait).isTrue();
      assertThat(r.describe())
          .contains(
              "+ claim retry 1.05s + the subscription's retry backoff (in-progress-max-wait is"
                  + " below the lease");
    }
    assertThat(CrashRecovery.of(subscription("in-progress-max-wait = 30s")).plusRetryBackoff())
        .isFalse();
  }

  @Test
  void a_stream_ack_deadline_is_never_below_pubsubs_10s() {
    assertThat(
            CrashRecovery.of(
                    subscription("min-ack-extension = 5s, max-ack-extension-per-call = 10s"))
                .streamAckDeadline())
        .isEqualTo(Duration.ofSeconds(10));
  }
}
