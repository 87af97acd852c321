package dev.pubsubworker.runtime.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.pubsubworker.runtime.config.SubscriptionConfig;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.pubsub.CrashRecovery;
import dev.pubsubworker.runtime.testing.TestPubSub;
import dev.pubsubworker.testservices.PubSubEmulator;
import dev.pubsubworker.testservices.SubscriptionFixture;
import dev.pubsubworker.testservices.SubscriptionSpec;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's time to reprocess after a crash, end to end with the shipped ack-extension defaults:
 * two workers ({@code run}, real processes) are SIGKILLed seconds after their streams opened and
 * were handed messages in every state a delivery can be in when its worker dies, and a surviving
 * worker must have run every one of them within the bound {@link CrashRecovery} derives from the
 * config (max(ack deadline, lease) + claim retry: about 61 s), once each.
 *
 * <p>Each victim has two streaming pulls, one handler thread each, a handler that holds its message
 * for ten minutes and a flow-control window of {@value #WINDOW} messages per stream: Pub/Sub hands
 * each stream its window and nothing more. Of each stream's messages one runs (its key claimed, a
 * 30 s lease) and the others wait for the stream's handler thread (received and modacked, so leased
 * for one ack extension). Messages a stream has been sent but not yet read or modacked when the
 * worker dies (a moment's state) are leased for the stream ack deadline the client sent; both are
 * at most {@code max-ack-extension-per-call}, whose old default of 600 s made such messages take
 * ten minutes.
 *
 * <p>Only the embedded server can run this: Google's emulator never gives back a killed stream's
 * messages. The bound is asserted as a deadline from the kill; no other timing is asserted.
 */
class CrashRecoveryEndToEndTest {

  /** The flow-control window of each of a victim's two streams. */
  private static final int WINDOW = 5;

  private static final int VICTIMS = 2;

  /** A window per stream of each victim: all that Pub/Sub hands the victims. */
  private static final int MESSAGES = VICTIMS * 2 * WINDOW;

  /**
   * One handler thread per stream, two streams with a window of {@link #WINDOW} each; ack
   * extension, lease and everything else as shipped.
   */
  private static final String VICTIM_SETTINGS =
      """
      executor-threads = 1
      parallel-pull-count = 2
      flow-control.max-outstanding-messages = %d
      """
          .formatted(WINDOW);

  /** How long a victim's handler holds its transaction open: until it is killed. */
  private static final Duration VICTIM_WORK = Duration.ofMinutes(10);

  /** How long the survivor's handler holds its transaction open. */
  private static final Duration SURVIVOR_WORK = Duration.ofMillis(100);

  /**
   * What the bound allows beyond the time until a message runs again: the survivor's handler and
   * its commit, and the lock-store round trips of its claims.
   */
  private static final Duration RUN_ALLOWANCE = SURVIVOR_WORK.plusSeconds(4);

  @TempDir Path dir;

  private SlowEffectWorkers workers;

  @AfterEach
  void stopEverything() throws Exception {
    if (workers != null) {
      workers.close();
    }
  }

  @Test
  void workers_killed_right_after_their_streams_opened_lose_no_message_for_longer_than_the_bound()
      throws Exception {
    PubSubEmulator pubsub = TestPubSub.embedded();
    SubscriptionFixture fixture =
        pubsub.createSubscription(
            SubscriptionSpec.newBuilder().setAckDeadline(Duration.ofSeconds(10)).build());
    workers = new SlowEffectWorkers(dir, pubsub, fixture);

    List<Process> victims = new ArrayList<>();
    for (int v = 1; v <= VICTIMS; v++) {
      victims.add(workers.start("victim" + v, VICTIM_WORK, VICTIM_SETTINGS));
    }
    for (int v = 1; v <= VICTIMS; v++) {
      workers.awaitPulling("victim" + v);
    }
    // The bound the victims' own config implies: the shipped ack-extension defaults.
    SubscriptionConfig victimConfig =
        WorkerConfig.loadFile(workers.config("victim1"), getClass().getClassLoader())
            .subscriptions()
            .get("work");
    CrashRecovery recovery = CrashRecovery.of(victimConfig);
    assertThat(recovery.worstCase())
        .as("the shipped config's promise: well under a minute beyond the lease")
        .isLessThan(victimConfig.guard().lease().plus(Duration.ofMinutes(1)));

    // One at a time, each in a response of its own.
    workers.publish(MESSAGES);
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> running("victim1") > 0 && running("victim2") > 0);
    // Everything was handed to the victims: nothing is left for anyone else to pull.
    assertThat(pubsub.pull(fixture.subscription(), MESSAGES, Duration.ofMillis(500)))
        .as("messages not delivered to a victim")
        .isEmpty();

    Process survivor = workers.start("survivor", SURVIVOR_WORK, "executor-threads = 8");
    workers.awaitPulling("survivor");

    long killedNanos = System.nanoTime();
    long killedMillis = System.currentTimeMillis();
    for (Process victim : victims) {
      victim.destroyForcibly(); // SIGKILL
    }
    for (Process victim : victims) {
      assertThat(victim.waitFor(30, TimeUnit.SECONDS)).isTrue();
    }
    assertThat(workers.effectsPerId()).as("rows committed before the kill").isEmpty();

    Duration bound = recovery.worstCase().plus(RUN_ALLOWANCE);
    await()
        .atMost(bound.minusNanos(System.nanoTime() - killedNanos))
        .pollInterval(Duration.ofMillis(250))
        .until(() -> workers.effectsPerId().size() == MESSAGES);
    Map<String, Double> after = workers.secondsAfter(killedMillis);
    System.out.printf(
        "all %d messages ran again within %.1f s of the kill (bound %.2f s: %s, + %.1f s to run);"
            + " seconds after the kill, per message: %s%n",
        MESSAGES,
        after.values().stream().mapToDouble(Double::doubleValue).max().orElse(0),
        bound.toMillis() / 1000.0,
        recovery.describe(),
        RUN_ALLOWANCE.toMillis() / 1000.0,
        after);

    Map<String, Integer> perId = workers.effectsPerId();
    assertThat(perId.values()).as("effects per message id: %s", perId).containsOnly(1);
    assertThat(workers.committedBy(survivor.pid())).isEqualTo(MESSAGES);

    survivor.destroy(); // SIGTERM: a clean stop
    assertThat(survivor.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(survivor.exitValue()).isZero();
  }

  /** How many handlers {@code name} has running (each holds its transaction open). */
  private int running(String name) throws IOException {
    return (int)
        workers.log(name).lines().filter(l -> l.contains("holding the transaction")).count();
  }
}
