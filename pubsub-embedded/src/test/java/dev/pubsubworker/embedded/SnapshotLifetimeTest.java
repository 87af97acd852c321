package dev.pubsubworker.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.api.gax.rpc.FailedPreconditionException;
import com.google.api.gax.rpc.InvalidArgumentException;
import com.google.api.gax.rpc.NotFoundException;
import com.google.protobuf.FieldMask;
import com.google.pubsub.v1.ProjectName;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.ReceivedMessage;
import com.google.pubsub.v1.SeekRequest;
import com.google.pubsub.v1.Snapshot;
import com.google.pubsub.v1.Subscription;
import com.google.pubsub.v1.SubscriptionName;
import com.google.pubsub.v1.Topic;
import com.google.pubsub.v1.TopicName;
import com.google.pubsub.v1.UpdateSnapshotRequest;
import dev.pubsubworker.testkit.ManualTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What snapshots, seeks and topic retention do over days, on the embedded server with a manual
 * clock: Google's emulator cannot be moved that far, so these are not part of the differential
 * suite.
 */
class SnapshotLifetimeTest {

  private static final ManualTime TIME = new ManualTime();
  private static EmbeddedPubSub server;
  private static PubSubTarget target;

  @BeforeAll
  static void start() {
    server = EmbeddedPubSub.newBuilder().setClock(TIME.clock()).start();
    target = new PubSubTarget(server.hostPort(), "snapshot-lifetime");
  }

  @AfterAll
  static void stop() {
    target.close();
    server.close();
  }

  @Test
  void a_snapshot_lives_seven_days_minus_the_age_of_the_oldest_unacked_message_then_is_gone() {
    TopicName topic = target.createTopic("lifetime");
    SubscriptionName subscription = target.createSubscription(topic, Subscription.newBuilder());
    target.publish(topic, "old");
    Instant published = TIME.now();
    TIME.advance(Duration.ofDays(2));
    target.publish(topic, "newer");
    String name = snapshotName("lifetime");

    Snapshot snapshot = target.subscriptions.createSnapshot(name, subscription.toString());

    assertThat(Snapshots.instant(snapshot.getExpireTime()))
        .isEqualTo(published.plus(Duration.ofDays(7)));
    TIME.advance(Duration.ofDays(5).minusSeconds(1));
    assertThat(target.subscriptions.getSnapshot(name)).isEqualTo(snapshot);
    TIME.advance(Duration.ofSeconds(1));
    assertThatThrownBy(() -> target.subscriptions.getSnapshot(name))
        .isInstanceOf(NotFoundException.class);
    assertThat(target.subscriptions.listSnapshots(ProjectName.of(target.project)).iterateAll())
        .extracting(Snapshot::getName)
        .doesNotContain(name);
    assertThat(target.topics.listTopicSnapshots(topic).iterateAll()).isEmpty();
    assertThatThrownBy(() -> seekToSnapshot(subscription, name))
        .isInstanceOf(NotFoundException.class);
  }

  @Test
  void with_an_empty_backlog_a_snapshot_lives_seven_days() {
    TopicName topic = target.createTopic("empty");
    SubscriptionName subscription = target.createSubscription(topic, Subscription.newBuilder());

    Snapshot snapshot =
        target.subscriptions.createSnapshot(snapshotName("empty"), subscription.toString());

    assertThat(Snapshots.instant(snapshot.getExpireTime()))
        .isEqualTo(TIME.now().plus(Duration.ofDays(7)));
  }

  @Test
  void a_snapshot_that_would_expire_within_an_hour_is_refused() {
    TopicName topic = target.createTopic("too-old");
    SubscriptionName subscription = target.createSubscription(topic, Subscription.newBuilder());
    target.publish(topic, "ancient");
    TIME.advance(Duration.ofDays(7).minusMinutes(61));
    target.subscriptions.createSnapshot(snapshotName("just-in-time"), subscription.toString());

    TIME.advance(Duration.ofMinutes(2));

    assertThatThrownBy(
            () ->
                target.subscriptions.createSnapshot(
                    snapshotName("too-late"), subscription.toString()))
        .isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("backlog is too old to snapshot")
        .hasMessageContaining("less than 1 hour from now");
  }

  @Test
  void an_updated_expire_time_must_lie_between_now_and_seven_days_after_creation() {
    TopicName topic = target.createTopic("expire-update");
    SubscriptionName subscription = target.createSubscription(topic, Subscription.newBuilder());
    String name = snapshotName("expire-update");
    Instant created = TIME.now();
    target.subscriptions.createSnapshot(name, subscription.toString());
    TIME.advance(Duration.ofDays(1));

    assertThatThrownBy(() -> updateExpireTime(name, TIME.now()))
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("must be after now");
    assertThatThrownBy(
            () -> updateExpireTime(name, created.plus(Duration.ofDays(7)).plusSeconds(1)))
        .isInstanceOf(InvalidArgumentException.class);
    Snapshot updated = updateExpireTime(name, TIME.now().plusSeconds(60));

    assertThat(Snapshots.instant(updated.getExpireTime())).isEqualTo(TIME.now().plusSeconds(60));
    TIME.advance(Duration.ofSeconds(60));
    assertThatThrownBy(() -> target.subscriptions.getSnapshot(name))
        .isInstanceOf(NotFoundException.class);
  }

  @Test
  void seeking_to_a_snapshot_ends_leases_and_the_old_ack_ids_no_longer_ack() {
    TopicName topic = target.createTopic("seek-leases");
    SubscriptionName subscription = target.createSubscription(topic, Subscription.newBuilder());
    target.publish(topic, "leased");
    ReceivedMessage first = target.pullExactly(subscription, 1).get(0);
    String name = snapshotName("seek-leases");
    target.subscriptions.createSnapshot(name, subscription.toString());

    seekToSnapshot(subscription, name);
    target.acknowledge(subscription, List.of(first));

    ReceivedMessage again = target.pullExactly(subscription, 1).get(0);
    assertThat(again.getMessage().getMessageId())
        .as("delivered again at once, although its lease had not expired and its old ack id acked")
        .isEqualTo(first.getMessage().getMessageId());
    assertThat(again.getAckId()).isNotEqualTo(first.getAckId());
    target.acknowledge(subscription, List.of(again));
    assertThat(target.pullOnce(subscription)).isEmpty();
  }

  @Test
  void after_a_seek_to_a_snapshot_an_ordering_keys_messages_come_in_publish_order() {
    TopicName topic = target.createTopic("seek-ordering");
    SubscriptionName subscription =
        target.createSubscription(topic, Subscription.newBuilder().setEnableMessageOrdering(true));
    String name = snapshotName("seek-ordering");
    target.subscriptions.createSnapshot(name, subscription.toString());
    for (int i = 1; i <= 3; i++) {
      target.topics.publish(
          topic,
          List.of(
              PubsubMessage.newBuilder()
                  .setData(PubSubScenarios.utf8("k" + i))
                  .setOrderingKey("k")
                  .build()));
    }
    target.acknowledge(subscription, target.pullExactly(subscription, 3));

    seekToSnapshot(subscription, name);

    assertThat(target.pullExactly(subscription, 3))
        .extracting(PubSubScenarios::text)
        .containsExactly("k1", "k2", "k3");
  }

  @Test
  void a_topics_retention_window_bounds_how_far_back_a_seek_reaches() {
    TopicName topic = TopicName.of(target.project, target.uniqueId("window"));
    target.topics.createTopic(
        Topic.newBuilder()
            .setName(topic.toString())
            .setMessageRetentionDuration(PubSubScenarios.seconds(600))
            .build());
    SubscriptionName subscription = target.createSubscription(topic, Subscription.newBuilder());
    Instant start = TIME.now();
    target.publish(topic, "fell-out");
    target.acknowledge(subscription, target.pullExactly(subscription, 1));
    TIME.advance(Duration.ofMinutes(11));
    target.publish(topic, "within");
    target.acknowledge(subscription, target.pullExactly(subscription, 1));

    target.seek(subscription, Snapshots.timestamp(start.minusSeconds(1)));

    assertThat(target.pullExactly(subscription, 1))
        .extracting(PubSubScenarios::text)
        .containsExactly("within");
    assertThat(target.pullOnce(subscription)).isEmpty();
  }

  @Test
  void
      a_snapshot_of_a_deleted_topic_matches_no_subscription_of_the_topic_recreated_under_its_name() {
    TopicName topic = target.createTopic("recreated");
    SubscriptionName subscription = target.createSubscription(topic, Subscription.newBuilder());
    String name = snapshotName("recreated");
    target.subscriptions.createSnapshot(name, subscription.toString());

    target.topics.deleteTopic(topic);
    target.topics.createTopic(topic);
    SubscriptionName fresh = target.createSubscription(topic, Subscription.newBuilder());

    assertThat(target.topics.listTopicSnapshots(topic).iterateAll()).isEmpty();
    assertThatThrownBy(() -> seekToSnapshot(fresh, name))
        .isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("considered a distinct topic");
    assertThatThrownBy(
            () ->
                target.subscriptions.createSnapshot(
                    snapshotName("orphan"), subscription.toString()))
        .as("the old subscription's topic is _deleted-topic_ now")
        .isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("topic has been deleted");
  }

  private static Snapshot updateExpireTime(String name, Instant expireTime) {
    return target.subscriptions.updateSnapshot(
        UpdateSnapshotRequest.newBuilder()
            .setSnapshot(
                Snapshot.newBuilder().setName(name).setExpireTime(Snapshots.timestamp(expireTime)))
            .setUpdateMask(FieldMask.newBuilder().addPaths("expire_time"))
            .build());
  }

  private static void seekToSnapshot(SubscriptionName subscription, String snapshot) {
    target.subscriptions.seek(
        SeekRequest.newBuilder()
            .setSubscription(subscription.toString())
            .setSnapshot(snapshot)
            .build());
  }

  private static String snapshotName(String prefix) {
    return "projects/" + target.project + "/snapshots/" + target.uniqueId(prefix);
  }
}
