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
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * {@code /healthz} and {@code /readyz} of a real worker on the embedded Pub/Sub server, through its
 * life: created, pulling, lock store unreachable and back, stopping, failed.
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
