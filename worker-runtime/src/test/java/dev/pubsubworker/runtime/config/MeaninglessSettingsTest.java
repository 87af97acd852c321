package dev.pubsubworker.runtime.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Settings that parse but mean nothing are refused, one line each naming the setting: a fraction
 * where a count is asked for (Typesafe Config would truncate it), a total extension time shorter
 * than one extension, liveness bounds that healthy calls exceed, and a settle time outside what a
 * stream can show.
 */
class MeaninglessSettingsTest {

  private static final String SUBSCRIPTION =
      "pubsub-worker.subscriptions { orders { name = \"orders-sub\", handler = orders } }\n";

  private static WorkerConfig load(String hocon) {
    return WorkerConfig.load(
        ConfigFactory.parseString("pubsub-worker.project-id = p\n" + SUBSCRIPTION + hocon)
            .withFallback(ConfigFactory.defaultReference())
            .resolve());
  }

  private static List<String> problems(String hocon) {
    try {
      load(hocon);
    } catch (InvalidConfigException e) {
      return e.problems().stream().map(p -> p.path() + ": " + p.problem()).toList();
    }
    throw new AssertionError("expected the config to be refused: " + hocon);
  }

  @Test
  void a_fraction_where_a_count_is_asked_for_is_refused_not_truncated() {
    assertThat(problems("pubsub-worker.subscription-defaults.executor-threads = 2.5"))
        .containsExactly(
            "pubsub-worker.subscription-defaults.executor-threads: must be a whole number in"
                + " 1..1000, but was 2.5");
    assertThat(problems("pubsub-worker.subscriptions.orders.executor-threads = \"2.5\""))
        .containsExactly(
            "pubsub-worker.subscriptions.orders.executor-threads: must be a whole number in"
                + " 1..1000, but was 2.5");
    assertThat(problems("pubsub-worker.subscription-defaults.parallel-pull-count = 1.5"))
        .containsExactly(
            "pubsub-worker.subscription-defaults.parallel-pull-count: must be a whole number in"
                + " 1..64, but was 1.5");
    assertThat(problems("pubsub-worker.observability.http-port = 8080.5"))
        .containsExactly(
            "pubsub-worker.observability.http-port: must be a whole number in 0..65535, but was"
                + " 8080.5");
    assertThat(
            load("pubsub-worker.subscription-defaults.executor-threads = 2.0")
                .subscriptions()
                .get("orders")
                .client()
                .executorThreads())
        .as("2.0 is a whole number")
        .isEqualTo(2);
  }

  @Test
  void a_total_ack_extension_shorter_than_one_extension_is_refused() {
    assertThat(
            problems(
                "pubsub-worker.subscription-defaults { max-ack-extension = 30s,"
                    + " min-ack-extension = 60s }"))
        .containsExactly(
            "pubsub-worker.subscription-defaults.max-ack-extension: max-ack-extension (30s) must"
                + " be at least min-ack-extension (1m), the shortest single extension the client"
                + " asks for");
    assertThat(problems("pubsub-worker.subscriptions.orders.max-ack-extension = 59s"))
        .as("against the inherited min-ack-extension")
        .containsExactly(
            "pubsub-worker.subscriptions.orders.max-ack-extension: max-ack-extension (59s) must be"
                + " at least min-ack-extension (1m), the shortest single extension the client"
                + " asks for");
    assertThat(
            load("pubsub-worker.subscription-defaults { max-ack-extension = 60s,"
                    + " in-progress-max-wait = 60s }")
                .subscriptions()
                .get("orders")
                .client()
                .maxAckExtension())
        .as("equal is fine")
        .isEqualTo(Duration.ofSeconds(60));
  }

  @Test
  void liveness_bounds_shorter_than_a_healthy_call_are_refused() {
    assertThat(problems("pubsub-worker.observability.lock-store-stuck-after = 1ms"))
        .containsExactly(
            "pubsub-worker.observability.lock-store-stuck-after: must be at least 1s, but was"
                + " '1ms'");
    assertThat(problems("pubsub-worker.observability.handler-stuck-after = 500ms"))
        .containsExactly(
            "pubsub-worker.observability.handler-stuck-after: must be 0s (off) or at least 1s, but"
                + " was 500ms");
    assertThat(problems("pubsub-worker.observability.handler-stuck-after = -1s"))
        .containsExactly(
            "pubsub-worker.observability.handler-stuck-after: must not be negative, but was '-1s'");
    ObservabilityConfig o =
        load("pubsub-worker.observability { lock-store-stuck-after = 1s, handler-stuck-after = 15m }")
            .observability();
    assertThat(o.lockStoreStuckAfter()).isEqualTo(Duration.ofSeconds(1));
    assertThat(o.handlerStuckAfter()).isEqualTo(Duration.ofMinutes(15));
    assertThat(o.handlerStuckCheck()).isTrue();
  }

  @Test
  void the_stream_settle_time_is_bounded_by_what_a_stream_can_show() {
    assertThat(problems("pubsub-worker.observability.pubsub-stream-settle-time = 50ms"))
        .containsExactly(
            "pubsub-worker.observability.pubsub-stream-settle-time: must be at least 100ms, but"
                + " was '50ms'");
    assertThat(problems("pubsub-worker.observability.pubsub-stream-settle-time = 20s"))
        .containsExactly(
            "pubsub-worker.observability.pubsub-stream-settle-time: must be at most 15s, but was"
                + " '20s'");
    assertThat(
            load("pubsub-worker.observability.pubsub-stream-settle-time = 5s")
                .observability()
                .pubsubStreamSettleTime())
        .isEqualTo(Duration.ofSeconds(5));
  }
}
