package dev.pubsubworker.runtime.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.core.LockRecord;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.worker.Worker;
import dev.pubsubworker.testservices.SubscriptionSpec;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code /healthz} and {@code /readyz} of a real worker on the embedded Pub/Sub server, through its
 * life: created, pulling, lock store unreachable and back, stopping, failed, and with every handler
 * thread wedged.
 */
class HealthEndpointTest {

  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final String FAST_PROBE =
      """
      pubsub-worker.observability {
        lock-store-probe-interval = 100ms
        lock-store-stale-after = 1s
      }
      """;

  @Test
  void ready_only_while_the_subscribers_pull_and_the_lock_store_answers() {
    try (EmulatorWorkers w = new EmulatorWorkers(SubscriptionSpec.defaults())) {
      WorkerConfig config = w.config("", FAST_PROBE);
      Observability observability = w.observability(config);
      Worker worker = w.create(config, (m, c) -> {}, observability);
      SwitchableLockAdmin store = new SwitchableLockAdmin(worker.admin());
      observability.start(WorkerStatus.of(worker), () -> store);
      InetSocketAddress server = observability.httpAddress().orElseThrow();

      // Before the subscribers start: alive, not ready, and saying why.
      assertThat(Http.get(server, "/healthz").status()).isEqualTo(200);
      Http.Answer early = Http.get(server, "/readyz");
      assertThat(early.status()).isEqualTo(503);
      assertThat(early.contentType()).isEqualTo("text/plain; charset=utf-8");
      assertThat(early.body()).startsWith("not ready: ").contains("subscribers not started yet");

      worker.start();
      await().atMost(WAIT).until(() -> Http.get(server, "/readyz").status() == 200);
      assertThat(Http.get(server, "/readyz").body())
          .startsWith("ready: every subscriber is running; lock store answered");

      // The lock store stops answering: not ready once its last answer is older than 1 s.
      store.down = true;
      await().atMost(WAIT).until(() -> Http.get(server, "/readyz").status() == 503);
      assertThat(Http.get(server, "/readyz").body())
          .contains("lock store has not answered for")
          .contains("(stale after 1.0s)")
          .contains("last error: probe failed: inspect failed: lock store unreachable (test)");
      assertThat(Http.get(server, "/healthz").status())
          .as("an unreachable store is not a reason to restart the process")
          .isEqualTo(200);
      assertThat(Http.get(server, "/metrics").body())
          .contains(
              "pubsub_worker_lock_store_calls_seconds_count{result=\"failure\",verb=\"inspect\"}");

      store.down = false;
      await().atMost(WAIT).until(() -> Http.get(server, "/readyz").status() == 200);

      worker.stop();
      Http.Answer stopped = Http.get(server, "/readyz");
      assertThat(stopped.status()).isEqualTo(503);
      assertThat(stopped.body()).startsWith("not ready: ").contains("stopping");
      assertThat(Http.get(server, "/healthz").status()).isEqualTo(200);
    }
  }

  @Test
  void a_worker_whose_subscriber_failed_is_neither_live_nor_ready() {
    try (EmulatorWorkers w = new EmulatorWorkers(SubscriptionSpec.defaults())) {
      WorkerConfig config = w.config("", FAST_PROBE);
      Observability observability = w.observability(config);
      Worker worker = w.create(config, (m, c) -> {}, observability);
      observability.start(worker);
      InetSocketAddress server = observability.httpAddress().orElseThrow();
      worker.start();
      await().atMost(WAIT).until(() -> Http.get(server, "/readyz").status() == 200);

      // Deleting the subscription under the running subscriber makes its stream fail for good.
      w.pubsub.subscriptionAdmin().deleteSubscription(w.fixture.subscription());
      await().atMost(WAIT).until(() -> Http.get(server, "/healthz").status() == 503);
      assertThat(Http.get(server, "/healthz").body()).startsWith("failed: ");
      assertThat(Http.get(server, "/readyz").status()).isEqualTo(503);
    }
  }

  @Test
  void wedged_handler_threads_show_in_the_age_gauge_and_fail_liveness_when_watched()
      throws Exception {
    try (EmulatorWorkers w = new EmulatorWorkers(SubscriptionSpec.defaults())) {
      WorkerConfig config =
          w.config(
              "executor-threads = 2",
              FAST_PROBE + "pubsub-worker.observability.handler-stuck-after = 2s\n");
      Observability observability = w.observability(config);
      CountDownLatch release = new CountDownLatch(1);
      Worker worker =
          w.create(
              config,
              (m, c) -> {
                // A handler that waits for something that never comes, deaf to interrupts.
                while (!release.await(1, TimeUnit.MINUTES)) {
                  Thread.onSpinWait();
                }
              },
              observability);
      observability.start(worker);
      InetSocketAddress server = observability.httpAddress().orElseThrow();
      worker.start();
      try {
        await().atMost(WAIT).until(() -> Http.get(server, "/readyz").status() == 200);
        w.publish("a", Map.of());
        w.publish("b", Map.of());
        await().atMost(WAIT).until(() -> worker.subscriptions().orElseThrow().inFlight() == 2);
        assertThat(Http.get(server, "/healthz").status()).isEqualTo(200);

        await()
            .atMost(WAIT)
            .until(
                () ->
                    new PrometheusText(Http.get(server, "/metrics").body())
                            .valueOrZero(
                                "pubsub_worker_handler_oldest_age_seconds", "subscription", "test")
                        > 2.0);
        await().atMost(WAIT).until(() -> Http.get(server, "/healthz").status() == 503);
        assertThat(Http.get(server, "/healthz").body())
            .startsWith(
                "stuck in a handler: a delivery of subscription test on thread handler-test-")
            .contains("(stuck after 2.0s); 2 handler(s) running");
        assertThat(Http.get(server, "/readyz").status())
            .as("readiness is about pulling, not about handlers")
            .isEqualTo(200);

        release.countDown();
        await().atMost(WAIT).until(() -> Http.get(server, "/healthz").status() == 200);
        assertThat(
                new PrometheusText(Http.get(server, "/metrics").body())
                    .valueOrZero(
                        "pubsub_worker_handler_oldest_age_seconds", "subscription", "test"))
            .isZero();
      } finally {
        release.countDown();
        worker.stop();
      }
    }
  }

  @Test
  void without_handler_stuck_after_wedged_handlers_leave_liveness_alone() throws Exception {
    try (EmulatorWorkers w = new EmulatorWorkers(SubscriptionSpec.defaults())) {
      WorkerConfig config = w.config("executor-threads = 1", FAST_PROBE);
      assertThat(config.observability().handlerStuckCheck()).as("off by default").isFalse();
      Observability observability = w.observability(config);
      CountDownLatch release = new CountDownLatch(1);
      Worker worker = w.create(config, (m, c) -> release.await(1, TimeUnit.MINUTES), observability);
      observability.start(worker);
      InetSocketAddress server = observability.httpAddress().orElseThrow();
      worker.start();
      try {
        w.publish("a", Map.of());
        await()
            .atMost(WAIT)
            .until(
                () ->
                    new PrometheusText(Http.get(server, "/metrics").body())
                            .valueOrZero(
                                "pubsub_worker_handler_oldest_age_seconds", "subscription", "test")
                        > 1.0);
        assertThat(Http.get(server, "/healthz").status()).isEqualTo(200);
      } finally {
        release.countDown();
        worker.stop();
      }
    }
  }

  /** The worker's own lock store, whose reads can be made to fail as if it were unreachable. */
  private static final class SwitchableLockAdmin implements LockAdmin {
    private final LockAdmin real;
    volatile boolean down;

    SwitchableLockAdmin(LockAdmin real) {
      this.real = real;
    }

    @Override
    public Optional<LockRecord> inspect(String key) {
      if (down) {
        throw new LockBackendException("inspect failed: lock store unreachable (test)");
      }
      return real.inspect(key);
    }

    @Override
    public boolean forget(String key) {
      return real.forget(key);
    }

    @Override
    public int purgeExpired(int limit) {
      return real.purgeExpired(limit);
    }
  }
}
