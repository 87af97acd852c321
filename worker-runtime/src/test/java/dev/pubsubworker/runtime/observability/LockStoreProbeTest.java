package dev.pubsubworker.runtime.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.common.util.concurrent.Service;
import dev.pubsubworker.backend.memory.InMemoryLockBackend;
import dev.pubsubworker.core.InvalidLockRecordException;
import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockRecord;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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

  @Test
  void an_unreadable_record_under_the_probe_key_still_counts_as_an_answer() throws Exception {
    LockAdmin unreadable =
        new LockAdmin() {
          @Override
          public Optional<LockRecord> inspect(String key) {
            throw new InvalidLockRecordException(
                "inspect failed on test store",
                key,
                "state 'X' is neither CLAIMED nor DONE",
                Map.of());
          }

          @Override
          public boolean forget(String key) {
            return false;
          }

          @Override
          public int purgeExpired(int limit) {
            return 0;
          }
        };
    LockStoreProbe probe =
        new LockStoreProbe(() -> unreadable, Duration.ofMillis(5), freshness, metrics);
    probe.start();
    await().atMost(Duration.ofSeconds(5)).until(() -> freshness.lastAnswer().isPresent());
    probe.stop();
    probe.awaitTerminated(5, TimeUnit.SECONDS);
  }

  private static boolean threadNamed(String name) {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.isAlive() && t.getName().startsWith(name));
  }
}
