package dev.pubsubworker.embedded;

import static org.awaitility.Awaitility.await;

import com.google.pubsub.v1.SubscriptionName;
import dev.pubsubworker.testservices.PubSubEmulator;
import dev.pubsubworker.testservices.TestServices;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The differential suite against Google's Pub/Sub emulator (from {@link TestServices#pubsub()}:
 * skipped where it cannot be had, failed under {@code CI=true}).
 */
class EmulatorScenariosTest extends PubSubScenarios {

  private static PubSubTarget target;

  @BeforeAll
  static void start() {
    PubSubEmulator emulator = TestServices.pubsub();
    target = new PubSubTarget(emulator.hostPort(), emulator.projectId());
  }

  @AfterAll
  static void stop() {
    if (target != null) {
      target.close();
    }
  }

  @Override
  PubSubTarget target() {
    return target;
  }

  /** The emulator judges deadlines on the wall clock: the time has to really pass. */
  @Override
  void elapse(Duration duration) {
    long until = System.nanoTime() + duration.toNanos();
    await()
        .pollDelay(duration)
        .atMost(duration.plusSeconds(5))
        .until(() -> System.nanoTime() >= until);
  }

  /** The emulator cannot be asked how many streams it has open: this gives it a second. */
  @Override
  void awaitOpenStreams(SubscriptionName subscription, int count) {
    elapse(Duration.ofSeconds(1));
  }

  @Override
  Set<Divergence> divergences() {
    return EnumSet.of(
        Divergence.KILLED_STREAM_KEEPS_MESSAGES,
        Divergence.EXPIRED_ACK_ID_ACCEPTED,
        Divergence.RETRY_POLICY_IGNORED,
        Divergence.DELIVERY_ATTEMPT_WITHOUT_DEAD_LETTER_POLICY,
        Divergence.NESTED_UPDATE_MASK_REFUSED,
        Divergence.LABELS_NOT_UPDATABLE,
        Divergence.SUBSCRIPTION_RETENTION_CAPPED_AT_7_DAYS,
        Divergence.EXPIRATION_TTL_UNCHECKED,
        Divergence.PUBLISH_LIMITS_NOT_ENFORCED,
        Divergence.SNAPSHOT_NAME_REQUIRED,
        Divergence.UPDATE_SNAPSHOT_UNIMPLEMENTED,
        Divergence.SEEK_TO_ANOTHER_SUBSCRIPTIONS_SNAPSHOT_FINDS_NOTHING,
        Divergence.TOPIC_RETENTION_NOT_SHOWN_ON_SUBSCRIPTIONS,
        Divergence.PROTOCOL_BUFFER_SCHEMAS_UNIMPLEMENTED,
        Divergence.SCHEMAS_LISTED_WITH_DEFINITION_BY_DEFAULT,
        Divergence.SCHEMA_REVISION_TIME_NOT_WALL_CLOCK,
        Divergence.WINDOW_IGNORED,
        Divergence.STREAMS_SERVED_IN_TURNS);
  }
}
