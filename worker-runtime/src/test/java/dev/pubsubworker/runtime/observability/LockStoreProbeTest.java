package dev.pubsubworker.runtime.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.common.util.concurrent.Service;
import dev.pubsubworker.backend.memory.InMemoryLockBackend;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The lock-store probe as a Guava service: reads until stopped, then its thread ends. */
class LockStoreProbeTest {

  private final LockStoreFreshness freshness = new LockStoreFreshness(Clock.systemUTC());
  private final WorkerMetrics metrics = new WorkerMetrics(List.of("orders"));
  private final InMemoryLockBackend store = new InMemoryLockBackend();

  @Test
  void reads_the_store_until_stopped_and_then_terminates() throws Exception {
    LockStoreProbe probe =
        new LockStoreProbe(() -> store, Duration.ofMillis(5), freshness, metrics);

    probe.start();

    assertThat(probe.state()).isEqualTo(Service.State.RUNNING);
    await().atMost(Duration.ofSeconds(5)).until(() -> freshness.lastAnswer().isPresent());
    probe.stop();
    probe.awaitTerminated(5, TimeUnit.SECONDS);
    assertThat(probe.state()).isEqualTo(Service.State.TERMINATED);
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> !threadNamed("pubsub-worker-lock-store-probe"));
  }

  @Test
  void starts_once_and_stops_idempotently() throws Exception {
    LockStoreProbe probe =
        new LockStoreProbe(() -> store, Duration.ofSeconds(1), freshness, metrics);
    probe.start();

    assertThatThrownBy(probe::start).isInstanceOf(IllegalStateException.class);
    probe.stop();
    probe.stop();
    probe.awaitTerminated(5, TimeUnit.SECONDS);
    assertThat(probe.state()).isEqualTo(Service.State.TERMINATED);
  }

  @Test
  void a_probe_stopped_before_it_started_never_reads() {
    LockStoreProbe probe =
        new LockStoreProbe(() -> store, Duration.ofMillis(5), freshness, metrics);

    probe.stop();

    assertThat(probe.state()).isEqualTo(Service.State.TERMINATED);
    assertThatThrownBy(probe::start).isInstanceOf(IllegalStateException.class);
    assertThat(freshness.lastAnswer()).isEmpty();
  }

  private static boolean threadNamed(String name) {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.isAlive() && t.getName().startsWith(name));
  }
}
