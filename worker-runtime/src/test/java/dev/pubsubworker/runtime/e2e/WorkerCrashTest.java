package dev.pubsubworker.runtime.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.pubsubworker.runtime.testing.TestPubSub;
import dev.pubsubworker.testservices.PubSubEmulator;
import dev.pubsubworker.testservices.SubscriptionFixture;
import dev.pubsubworker.testservices.SubscriptionSpec;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The crash this product exists for, with real processes: three workers ({@code run}, as a
 * deployment starts them) share one subscription of the embedded server and a transactional
 * PostgreSQL lock store; two are killed with SIGKILL while their handlers hold open transactions
 * with written rows. Every message must end with exactly one committed row. Google's emulator
 * cannot run this: it never redelivers the messages of a killed stream.
 */
class WorkerCrashTest {

  private static final int MESSAGES = 24;
  private static final Pattern HOLDING =
      Pattern.compile("effect written for (m-\\d+), holding the transaction");

  @TempDir Path dir;

  private SlowEffectWorkers workers;

  @AfterEach
  void stopEverything() throws Exception {
    if (workers != null) {
      workers.close();
    }
  }

  @Test
  void workers_killed_mid_work_leave_every_message_processed_once() throws Exception {
    PubSubEmulator pubsub = TestPubSub.embedded();
    SubscriptionFixture fixture =
        pubsub.createSubscription(
            SubscriptionSpec.newBuilder()
                .setAckDeadline(Duration.ofSeconds(10))
                .setRetryPolicy(Duration.ofSeconds(1), Duration.ofSeconds(2))
                .build());
    workers = new SlowEffectWorkers(dir, pubsub, fixture);

    // The victims hold every message they take (and its open transaction) until they die.
    Process victim1 = start("victim1", Duration.ofMinutes(10), 2);
    Process victim2 = start("victim2", Duration.ofMinutes(10), 2);
    awaitStarted("victim1", "victim2");
    workers.publish(MESSAGES);
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> !held("victim1").isEmpty() && !held("victim2").isEmpty());
    Process survivor = start("survivor", Duration.ofMillis(200), 4);
    awaitStarted("survivor");

    Set<String> killedMidWork = new TreeSet<>(held("victim1"));
    killedMidWork.addAll(held("victim2"));
    victim1.destroyForcibly(); // SIGKILL
    victim2.destroyForcibly();
    assertThat(victim1.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(victim2.waitFor(30, TimeUnit.SECONDS)).isTrue();
    // Their transactions died with them: none of the rows they wrote was committed.
    assertThat(workers.committedBy(victim1.pid()) + workers.committedBy(victim2.pid())).isZero();

    // The embedded server redelivers what the dead streams held once its ack deadline passes; the
    // dead claims' leases (3 s) have lapsed by then, so the survivor takes over.
    long killed = System.nanoTime();
    await()
        .atMost(Duration.ofSeconds(120))
        .pollInterval(Duration.ofMillis(500))
        .until(() -> workers.effectsPerId().size() == MESSAGES);
    System.out.printf(
        "all %d messages committed %.1f s after the kill%n",
        MESSAGES, (System.nanoTime() - killed) / 1e9);
    Map<String, Integer> perId = workers.effectsPerId();
    assertThat(perId).hasSize(MESSAGES);
    assertThat(perId.values()).as("effects per message id: %s", perId).containsOnly(1);
    assertThat(workers.committedBy(survivor.pid())).isEqualTo(MESSAGES);
    // What the dead held was redone under a new claim: its lease lapsed, the survivor took over.
    assertThat(killedMidWork).isNotEmpty();
    for (String id : killedMidWork) {
      assertThat(workers.committedFence(id)).as("fence of %s's row", id).isGreaterThan(1);
    }

    survivor.destroy(); // SIGTERM: a clean stop
    assertThat(survivor.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(survivor.exitValue()).isZero();
  }

  private Process start(String name, Duration workTime, int maxOutstanding) throws IOException {
    return workers.start(
        name,
        workTime,
        """
        lease = 3s
        executor-threads = 2
        flow-control.max-outstanding-messages = %d
        """
            .formatted(maxOutstanding));
  }

  private void awaitStarted(String... names) {
    await()
        .atMost(Duration.ofSeconds(90))
        .until(
            () -> {
              for (String name : names) {
                if (!workers.log(name).contains("worker started")) {
                  return false;
                }
              }
              return true;
            });
  }

  /** The message ids whose rows {@code name} wrote and was holding uncommitted. */
  private Set<String> held(String name) throws IOException {
    Set<String> ids = new TreeSet<>();
    Matcher m = HOLDING.matcher(workers.log(name));
    while (m.find()) {
      ids.add(m.group(1));
    }
    return ids;
  }
}
