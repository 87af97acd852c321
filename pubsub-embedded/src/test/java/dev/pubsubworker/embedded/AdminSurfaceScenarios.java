package dev.pubsubworker.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.api.gax.rpc.AlreadyExistsException;
import com.google.api.gax.rpc.FailedPreconditionException;
import com.google.api.gax.rpc.InvalidArgumentException;
import com.google.api.gax.rpc.NotFoundException;
import com.google.protobuf.ByteString;
import com.google.protobuf.FieldMask;
import com.google.protobuf.Timestamp;
import com.google.pubsub.v1.CreateSnapshotRequest;
import com.google.pubsub.v1.DeadLetterPolicy;
import com.google.pubsub.v1.Encoding;
import com.google.pubsub.v1.ExpirationPolicy;
import com.google.pubsub.v1.GetSchemaRequest;
import com.google.pubsub.v1.ListSchemaRevisionsRequest;
import com.google.pubsub.v1.ListSchemasRequest;
import com.google.pubsub.v1.ProjectName;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.ReceivedMessage;
import com.google.pubsub.v1.RetryPolicy;
import com.google.pubsub.v1.Schema;
import com.google.pubsub.v1.SchemaName;
import com.google.pubsub.v1.SchemaSettings;
import com.google.pubsub.v1.SchemaView;
import com.google.pubsub.v1.SeekRequest;
import com.google.pubsub.v1.Snapshot;
import com.google.pubsub.v1.Subscription;
import com.google.pubsub.v1.SubscriptionName;
import com.google.pubsub.v1.Topic;
import com.google.pubsub.v1.TopicName;
import com.google.pubsub.v1.UpdateSnapshotRequest;
import com.google.pubsub.v1.UpdateSubscriptionRequest;
import com.google.pubsub.v1.UpdateTopicRequest;
import com.google.pubsub.v1.ValidateMessageRequest;
import dev.pubsubworker.embedded.PubSubScenarios.Divergence;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The differential suite's scenarios of the admin surface the official clients' own suites use:
 * pull subscriptions' push_config, update masks, retention bounds, Pub/Sub's publish limits,
 * snapshots and seek, and the SchemaService with topics that validate against a schema. {@link
 * PubSubScenarios} extends this class, so every scenario runs on both servers; where Google's
 * emulator departs from the documentation, the scenario names the {@link Divergence} and is skipped
 * there with it.
 */
abstract class AdminSurfaceScenarios {

  static final String AVRO_DEFINITION =
      "{\"type\":\"record\",\"name\":\"Order\",\"fields\":["
          + "{\"name\":\"id\",\"type\":\"string\"},{\"name\":\"quantity\",\"type\":\"int\"}]}";

  static final String AVRO_VALID_JSON = "{\"id\":\"o-1\",\"quantity\":3}";

  /** {@link #AVRO_VALID_JSON} in Avro's binary encoding: "o-1" (length 3, zigzag 6), then 3 (6). */
  static final byte[] AVRO_VALID_BINARY = {6, 'o', '-', '1', 6};

  static final String PROTO_DEFINITION =
      "syntax = \"proto3\";\n"
          + "message Order {\n"
          + "  string id = 1;\n"
          + "  int32 quantity = 2;\n"
          + "  map<string, string> tags = 3;\n"
          + "  Status status = 4;\n"
          + "  enum Status { NEW = 0; SHIPPED = 1; }\n"
          + "}\n";

  /** id "o-1" (field 1, length-delimited), quantity 3 (field 2, varint). */
  static final byte[] PROTO_VALID_BINARY = {0x0a, 3, 'o', '-', '1', 0x10, 3};

  abstract PubSubTarget target();

  abstract Set<Divergence> divergences();

  /** Skips the calling scenario, naming the divergence, on a server that has it. */
  void assumeDocumented(Divergence divergence) {
    Assumptions.assumeFalse(
        divergences().contains(divergence),
        () -> "this server departs from Google's documentation here: " + divergence);
  }

  // ---- subscriptions: push_config, update masks, retention ----

  @Test
  void aPullSubscriptionHasAnEmptyPushConfig() {
    TopicName topic = target().createTopic("push-config");
    SubscriptionName subscription = target().createSubscription(topic, Subscription.newBuilder());

    Subscription read = target().subscriptions.getSubscription(subscription);

    assertThat(read.hasPushConfig()).as("push_config is present").isTrue();
    assertThat(read.getPushConfig().getPushEndpoint()).isEmpty();
  }

  @Test
  void anUpdateMaskPathThatNamesNoFieldIsRefusedNamingIt() {
    TopicName topic = target().createTopic("mask-unknown");
    SubscriptionName subscription = target().createSubscription(topic, Subscription.newBuilder());

    assertThatThrownBy(() -> update(subscription, Subscription.newBuilder(), "bogus"))
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining(
            "Invalid update_mask provided in the UpdateSubscriptionRequest: bogus is not a known"
                + " Subscription field");
    assertThatThrownBy(() -> update(subscription, Subscription.newBuilder(), "topic"))
        .isInstanceOf(InvalidArgumentException.class);
  }

  @Test
  void labelsAreUpdatedThroughTheirMaskPath() {
    assumeDocumented(Divergence.LABELS_NOT_UPDATABLE);
    TopicName topic = target().createTopic("labels");
    SubscriptionName subscription = target().createSubscription(topic, Subscription.newBuilder());

    Topic topicUpdated =
        updateTopic(Topic.newBuilder().setName(topic.toString()).putLabels("team", "a"), "labels");
    Subscription subscriptionUpdated =
        update(subscription, Subscription.newBuilder().putLabels("team", "b"), "labels");

    assertThat(topicUpdated.getLabelsMap()).containsExactly(Map.entry("team", "a"));
    assertThat(subscriptionUpdated.getLabelsMap()).containsExactly(Map.entry("team", "b"));
    assertThat(target().subscriptions.getSubscription(subscription).getLabelsMap())
        .containsExactly(Map.entry("team", "b"));
  }

  @Test
  void aNestedUpdateMaskChangesOneFieldOfAPolicy() {
    assumeDocumented(Divergence.NESTED_UPDATE_MASK_REFUSED);
    TopicName topic = target().createTopic("mask-nested");
    TopicName deadLetters = target().createTopic("mask-nested-dl");
    SubscriptionName subscription =
        target()
            .createSubscription(
                topic,
                Subscription.newBuilder()
                    .setDeadLetterPolicy(
                        DeadLetterPolicy.newBuilder()
                            .setDeadLetterTopic(deadLetters.toString())
                            .setMaxDeliveryAttempts(5))
                    .setRetryPolicy(
                        RetryPolicy.newBuilder()
                            .setMinimumBackoff(PubSubScenarios.seconds(10))
                            .setMaximumBackoff(PubSubScenarios.seconds(300))));

    // Google's UpdateDeadLetterPolicyExample.
    Subscription updated =
        update(
            subscription,
            Subscription.newBuilder()
                .setDeadLetterPolicy(DeadLetterPolicy.newBuilder().setMaxDeliveryAttempts(20)),
            "dead_letter_policy.max_delivery_attempts");
    assertThat(updated.getDeadLetterPolicy().getMaxDeliveryAttempts()).isEqualTo(20);
    assertThat(updated.getDeadLetterPolicy().getDeadLetterTopic())
        .as("the policy's other field is kept")
        .isEqualTo(deadLetters.toString());

    updated =
        update(
            subscription,
            Subscription.newBuilder()
                .setRetryPolicy(
                    RetryPolicy.newBuilder().setMinimumBackoff(PubSubScenarios.seconds(20))),
            "retry_policy.minimum_backoff");
    assertThat(updated.getRetryPolicy().getMinimumBackoff()).isEqualTo(PubSubScenarios.seconds(20));
    assertThat(updated.getRetryPolicy().getMaximumBackoff())
        .isEqualTo(PubSubScenarios.seconds(300));
    assertThat(target().subscriptions.getSubscription(subscription).getRetryPolicy())
        .isEqualTo(updated.getRetryPolicy());

    assertThatThrownBy(
            () ->
                update(
                    subscription,
                    Subscription.newBuilder()
                        .setDeadLetterPolicy(
                            DeadLetterPolicy.newBuilder().setMaxDeliveryAttempts(200)),
                    "dead_letter_policy.max_delivery_attempts"))
        .as("a nested update is checked like a whole one")
        .hasMessageContaining("max_delivery_attempts is too large");
  }

  @Test
  void retentionOutsideTenMinutesToThirtyOneDaysIsRefused() {
    TopicName topic = target().createTopic("retention");
    Consumer<Long> subscriptionWith =
        secs ->
            target()
                .createSubscription(
                    topic,
                    Subscription.newBuilder()
                        .setMessageRetentionDuration(PubSubScenarios.seconds(secs)));
    Consumer<Long> topicWith =
        secs ->
            target()
                .topics
                .createTopic(
                    Topic.newBuilder()
                        .setName(target().topicName("retention").toString())
                        .setMessageRetentionDuration(PubSubScenarios.seconds(secs))
                        .build());
    long tenMinutes = 600;
    long thirtyOneDays = Duration.ofDays(31).toSeconds();

    assertThatThrownBy(() -> subscriptionWith.accept(tenMinutes - 1))
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("message_retention_duration out of bounds");
    assertThatThrownBy(() -> subscriptionWith.accept(thirtyOneDays + 1))
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("message_retention_duration out of bounds");
    subscriptionWith.accept(tenMinutes);
    subscriptionWith.accept(Duration.ofDays(7).toSeconds());

    assertThatThrownBy(() -> topicWith.accept(tenMinutes - 1))
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("message_retention_duration out of bounds");
    assertThatThrownBy(() -> topicWith.accept(thirtyOneDays + 1))
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("message_retention_duration out of bounds");
    topicWith.accept(tenMinutes);
    topicWith.accept(thirtyOneDays);

    SubscriptionName subscription = target().createSubscription(topic, Subscription.newBuilder());
    assertThatThrownBy(
            () ->
                update(
                    subscription,
                    Subscription.newBuilder()
                        .setMessageRetentionDuration(PubSubScenarios.seconds(60)),
                    "message_retention_duration"))
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("message_retention_duration out of bounds");
  }

  @Test
  void aSubscriptionMayRetainMessagesForThirtyOneDays() {
    assumeDocumented(Divergence.SUBSCRIPTION_RETENTION_CAPPED_AT_7_DAYS);
    TopicName topic = target().createTopic("retention-31d");
    long thirtyOneDays = Duration.ofDays(31).toSeconds();

    SubscriptionName subscription =
        target()
            .createSubscription(
                topic,
                Subscription.newBuilder()
                    .setMessageRetentionDuration(PubSubScenarios.seconds(thirtyOneDays)));

    assertThat(target().subscriptions.getSubscription(subscription).getMessageRetentionDuration())
        .isEqualTo(PubSubScenarios.seconds(thirtyOneDays));
  }

  @Test
  void anExpirationTtlUnderOneDayIsRefused() {
    assumeDocumented(Divergence.EXPIRATION_TTL_UNCHECKED);
    TopicName topic = target().createTopic("expiration");

    assertThatThrownBy(
            () ->
                target()
                    .createSubscription(
                        topic,
                        Subscription.newBuilder()
                            .setExpirationPolicy(
                                ExpirationPolicy.newBuilder()
                                    .setTtl(PubSubScenarios.seconds(3600)))))
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("expiration_policy.ttl");
    target()
        .createSubscription(
            topic,
            Subscription.newBuilder()
                .setExpirationPolicy(
                    ExpirationPolicy.newBuilder()
                        .setTtl(PubSubScenarios.seconds(Duration.ofDays(1).toSeconds()))));
  }

  // ---- publish limits ----

  @Test
  void messagesAtPubSubsPublishLimitsAreAccepted() {
    TopicName topic = target().createTopic("limits-ok");
    SubscriptionName subscription = target().createSubscription(topic, Subscription.newBuilder());
    Map<String, String> hundred = new HashMap<>();
    for (int i = 0; i < 99; i++) {
      hundred.put("k" + i, "v");
    }
    hundred.put(
        "googclient_traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    PubsubMessage atLimits =
        PubsubMessage.newBuilder()
            .putAllAttributes(hundred)
            .setOrderingKey("o".repeat(1024))
            .build();
    PubsubMessage longKeyAndValue =
        PubsubMessage.newBuilder().putAttributes("k".repeat(256), "v".repeat(1024)).build();

    target().topics.publish(topic, List.of(atLimits, longKeyAndValue));

    List<ReceivedMessage> received = target().pullExactly(subscription, 2);
    assertThat(received)
        .extracting(m -> m.getMessage().getAttributesCount())
        .containsExactlyInAnyOrder(100, 1);
    target().acknowledge(subscription, received);

    List<PubsubMessage> thousand = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      thousand.add(PubsubMessage.newBuilder().setData(PubSubScenarios.utf8("m" + i)).build());
    }
    assertThat(target().topics.publish(topic, thousand).getMessageIdsCount()).isEqualTo(1000);
  }

  @Test
  void aRequestOfMoreThanAThousandMessagesOrOfAnEmptyMessageIsRefused() {
    TopicName topic = target().createTopic("limits-count");
    List<PubsubMessage> tooMany = new ArrayList<>();
    for (int i = 0; i < 1001; i++) {
      tooMany.add(PubsubMessage.newBuilder().setData(PubSubScenarios.utf8("m" + i)).build());
    }

    assertThatThrownBy(() -> target().topics.publish(topic, tooMany))
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("Too many messages to publish");
    assertThatThrownBy(
            () -> target().topics.publish(topic, List.of(PubsubMessage.getDefaultInstance())))
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("Some messages are empty");
  }

  @Test
  void messagesBeyondPubSubsPublishLimitsAreRefused() {
    assumeDocumented(Divergence.PUBLISH_LIMITS_NOT_ENFORCED);
    TopicName topic = target().createTopic("limits-refused");
    Map<String, String> tooMany = new HashMap<>();
    for (int i = 0; i < 101; i++) {
      tooMany.put("k" + i, "v");
    }

    assertRefused(topic, PubsubMessage.newBuilder().putAllAttributes(tooMany), "at most 100");
    assertRefused(
        topic, PubsubMessage.newBuilder().putAttributes("k".repeat(257), "v"), "at most 256");
    assertRefused(
        topic, PubsubMessage.newBuilder().putAttributes("k", "v".repeat(1025)), "at most 1024");
    // Two-byte characters: the limits count UTF-8 bytes, not characters.
    assertRefused(
        topic, PubsubMessage.newBuilder().putAttributes("é".repeat(129), "v"), "at most 256");
    assertRefused(topic, PubsubMessage.newBuilder().putAttributes("googkey", "v"), "\"goog\"");
    assertRefused(
        topic,
        PubsubMessage.newBuilder()
            .setData(PubSubScenarios.utf8("x"))
            .setOrderingKey("o".repeat(1025)),
        "ordering key must be at most 1024");
    ByteString sixMegabytes = ByteString.copyFrom(new byte[6 * 1024 * 1024]);
    assertThatThrownBy(
            () ->
                target()
                    .topics
                    .publish(
                        topic,
                        List.of(
                            PubsubMessage.newBuilder().setData(sixMegabytes).build(),
                            PubsubMessage.newBuilder().setData(sixMegabytes).build())))
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("Request payload size exceeds the limit: 10485760 bytes");
  }

  @Test
  void aMessageWithAHundredAttributesIsDeadLetteredWithTheFourDeadLetterAttributesAdded() {
    TopicName topic = target().createTopic("dl-attributes");
    TopicName deadLetters = target().createTopic("dl-attributes-dl");
    SubscriptionName deadLetterSubscription =
        target().createSubscription(deadLetters, Subscription.newBuilder());
    SubscriptionName subscription =
        target()
            .createSubscription(
                topic,
                Subscription.newBuilder()
                    .setDeadLetterPolicy(
                        DeadLetterPolicy.newBuilder()
                            .setDeadLetterTopic(deadLetters.toString())
                            .setMaxDeliveryAttempts(5)));
    Map<String, String> hundred = new HashMap<>();
    for (int i = 0; i < 100; i++) {
      hundred.put("k" + i, "v");
    }
    target()
        .topics
        .publish(topic, List.of(PubsubMessage.newBuilder().putAllAttributes(hundred).build()));
    for (int attempt = 1; attempt <= 5; attempt++) {
      target().nack(subscription, target().pullExactly(subscription, 1).get(0));
    }

    assertThat(target().pullOnce(subscription)).isEmpty();
    ReceivedMessage dead = target().pullExactly(deadLetterSubscription, 1).get(0);
    assertThat(dead.getMessage().getAttributesMap())
        .hasSize(104)
        .containsKey("CloudPubSubDeadLetterSourceDeliveryCount");
    target().acknowledge(deadLetterSubscription, List.of(dead));
  }

  private void assertRefused(TopicName topic, PubsubMessage.Builder message, String why) {
    assertThatThrownBy(() -> target().topics.publish(topic, List.of(message.build())))
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining(why);
  }

  // ---- snapshots and seek ----

  @Test
  void aSnapshotKeepsTheBacklogOfItsCreationAndLaterMessagesAndSeekingToItRestoresThem() {
    TopicName topic = target().createTopic("snapshot");
    SubscriptionName subscription = target().createSubscription(topic, Subscription.newBuilder());
    target().publish(topic, "acked-before", "unacked-1", "unacked-2");
    Map<String, ReceivedMessage> first =
        PubSubScenarios.byText(target().pullExactly(subscription, 3));
    target().acknowledge(subscription, List.of(first.get("acked-before")));
    String name = snapshotName("snapshot");

    Snapshot snapshot = target().subscriptions.createSnapshot(name, subscription.toString());

    assertThat(snapshot.getName()).isEqualTo(name);
    assertThat(snapshot.getTopic()).isEqualTo(topic.toString());
    // 7 days minus the age of the oldest unacked message (published moments ago).
    Instant oldest = Snapshots.instant(first.get("unacked-1").getMessage().getPublishTime());
    assertThat(Snapshots.instant(snapshot.getExpireTime()))
        .isBetween(
            oldest.plus(Duration.ofDays(7)).minusSeconds(5),
            oldest.plus(Duration.ofDays(7)).plusSeconds(60));
    assertThat(target().subscriptions.getSnapshot(name)).isEqualTo(snapshot);
    assertThat(target().subscriptions.listSnapshots(ProjectName.of(target().project)).iterateAll())
        .contains(snapshot);
    assertThat(target().topics.listTopicSnapshots(topic).iterateAll()).containsExactly(name);

    target().acknowledge(subscription, List.of(first.get("unacked-1"), first.get("unacked-2")));
    target().publish(topic, "after");
    target().acknowledge(subscription, target().pullExactly(subscription, 1));
    assertThat(target().pullOnce(subscription)).isEmpty();

    seekToSnapshot(subscription, name);

    List<ReceivedMessage> again = target().pullExactly(subscription, 3);
    assertThat(again)
        .as("unacked at the snapshot, or published after it")
        .extracting(PubSubScenarios::text)
        .containsExactlyInAnyOrder("unacked-1", "unacked-2", "after");
    target().acknowledge(subscription, again);
    assertThat(target().pullOnce(subscription)).isEmpty();

    target().subscriptions.deleteSnapshot(name);
    assertThatThrownBy(() -> target().subscriptions.getSnapshot(name))
        .isInstanceOf(NotFoundException.class)
        .hasMessageEndingWith("NOT_FOUND: Snapshot does not exist");
    assertThat(target().topics.listTopicSnapshots(topic).iterateAll()).isEmpty();
  }

  @Test
  void snapshotAndSeekErrorsAreAlreadyExistsNotFoundFailedPreconditionAndInvalidArgument() {
    TopicName topic = target().createTopic("snapshot-errors");
    TopicName otherTopic = target().createTopic("snapshot-errors-other");
    SubscriptionName subscription = target().createSubscription(topic, Subscription.newBuilder());
    SubscriptionName otherSubscription =
        target().createSubscription(otherTopic, Subscription.newBuilder());
    String name = snapshotName("errors");
    String missing = snapshotName("missing");
    target().subscriptions.createSnapshot(name, subscription.toString());

    assertThatThrownBy(() -> target().subscriptions.createSnapshot(name, subscription.toString()))
        .isInstanceOf(AlreadyExistsException.class)
        .hasMessageEndingWith("ALREADY_EXISTS: Snapshot already exists");
    assertThatThrownBy(
            () ->
                target()
                    .subscriptions
                    .createSnapshot(
                        snapshotName("orphan"), target().subscriptionName("missing").toString()))
        .isInstanceOf(NotFoundException.class)
        .hasMessageEndingWith("NOT_FOUND: Subscription does not exist");
    String badName = "projects/" + target().project + "/snapshots/1-bad";
    assertThatThrownBy(
            () -> target().subscriptions.createSnapshot(badName, subscription.toString()))
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageEndingWith("INVALID_ARGUMENT: Invalid [snapshots] name: (name=" + badName + ")");
    assertThatThrownBy(() -> target().subscriptions.getSnapshot(missing))
        .isInstanceOf(NotFoundException.class)
        .hasMessageEndingWith("NOT_FOUND: Snapshot does not exist");
    assertThatThrownBy(() -> target().subscriptions.deleteSnapshot(missing))
        .isInstanceOf(NotFoundException.class);
    assertThatThrownBy(() -> seekToSnapshot(subscription, missing))
        .isInstanceOf(NotFoundException.class)
        .hasMessageEndingWith("NOT_FOUND: Snapshot does not exist");
    assertThatThrownBy(() -> seekToSnapshot(otherSubscription, name))
        .isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining(
            "The subscription's topic "
                + otherTopic
                + " is different from that of the snapshot "
                + topic);
    assertThatThrownBy(
            () ->
                target()
                    .subscriptions
                    .seek(
                        SeekRequest.newBuilder().setSubscription(subscription.toString()).build()))
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("No target was specified in the SeekRequest");
    target().subscriptions.deleteSnapshot(name);
  }

  @Test
  void aSnapshotCreatedWithoutANameGetsOneChosenByTheServer() {
    assumeDocumented(Divergence.SNAPSHOT_NAME_REQUIRED);
    TopicName topic = target().createTopic("snapshot-unnamed");
    SubscriptionName subscription = target().createSubscription(topic, Subscription.newBuilder());

    Snapshot snapshot =
        target()
            .subscriptions
            .createSnapshotCallable()
            .call(
                CreateSnapshotRequest.newBuilder()
                    .setSubscription(subscription.toString())
                    .build());

    assertThat(snapshot.getName()).startsWith("projects/" + target().project + "/snapshots/");
    assertThat(target().subscriptions.getSnapshot(snapshot.getName())).isEqualTo(snapshot);
    target().subscriptions.deleteSnapshot(snapshot.getName());
  }

  @Test
  void updatingASnapshotChangesItsLabelsAndItsExpireTime() {
    assumeDocumented(Divergence.UPDATE_SNAPSHOT_UNIMPLEMENTED);
    TopicName topic = target().createTopic("snapshot-update");
    SubscriptionName subscription = target().createSubscription(topic, Subscription.newBuilder());
    String name = snapshotName("update");
    Snapshot created = target().subscriptions.createSnapshot(name, subscription.toString());
    Timestamp sooner =
        Timestamp.newBuilder().setSeconds(created.getExpireTime().getSeconds() - 3600).build();

    Snapshot updated =
        target()
            .subscriptions
            .updateSnapshot(
                UpdateSnapshotRequest.newBuilder()
                    .setSnapshot(
                        Snapshot.newBuilder()
                            .setName(name)
                            .putLabels("team", "orders")
                            .setExpireTime(sooner))
                    .setUpdateMask(
                        FieldMask.newBuilder().addPaths("labels").addPaths("expire_time"))
                    .build());

    assertThat(updated.getLabelsMap()).containsEntry("team", "orders");
    assertThat(updated.getExpireTime()).isEqualTo(sooner);
    assertThat(updated.getTopic()).isEqualTo(topic.toString());
    assertThat(target().subscriptions.getSnapshot(name)).isEqualTo(updated);
    assertThatThrownBy(
            () ->
                target()
                    .subscriptions
                    .updateSnapshot(
                        UpdateSnapshotRequest.newBuilder()
                            .setSnapshot(Snapshot.newBuilder().setName(name).setTopic("x"))
                            .setUpdateMask(FieldMask.newBuilder().addPaths("topic"))
                            .build()))
        .isInstanceOf(InvalidArgumentException.class);
    target().subscriptions.deleteSnapshot(name);
  }

  @Test
  void anotherSubscriptionOfTheTopicSeeksToASnapshotAndGetsItsMessages() {
    assumeDocumented(Divergence.SEEK_TO_ANOTHER_SUBSCRIPTIONS_SNAPSHOT_FINDS_NOTHING);
    TopicName topic = target().createTopic("snapshot-other");
    SubscriptionName source = target().createSubscription(topic, Subscription.newBuilder());
    target().publish(topic, "backlog");
    String name = snapshotName("other");
    target().subscriptions.createSnapshot(name, source.toString());
    target().publish(topic, "later");
    SubscriptionName other = target().createSubscription(topic, Subscription.newBuilder());

    seekToSnapshot(other, name);

    List<ReceivedMessage> received = target().pullExactly(other, 2);
    assertThat(received)
        .extracting(PubSubScenarios::text)
        .containsExactlyInAnyOrder("backlog", "later");
    target().acknowledge(other, received);
    target().subscriptions.deleteSnapshot(name);
  }

  @Test
  void withoutRetainAckedMessagesSeekingBackDoesNotBringAckedMessagesBack() {
    TopicName topic = target().createTopic("seek-no-retain");
    SubscriptionName subscription = target().createSubscription(topic, Subscription.newBuilder());
    target().publish(topic, "gone", "kept");
    Map<String, ReceivedMessage> first =
        PubSubScenarios.byText(target().pullExactly(subscription, 2));
    target().acknowledge(subscription, List.of(first.get("gone")));

    target().seek(subscription, earlier(first.get("gone").getMessage().getPublishTime()));

    List<ReceivedMessage> again = target().pullExactly(subscription, 1);
    assertThat(PubSubScenarios.text(again.get(0)))
        .as("only the unacked message is retained")
        .isEqualTo("kept");
    target().acknowledge(subscription, again);
    assertThat(target().pullOnce(subscription)).isEmpty();
  }

  @Test
  void aTopicsRetentionLetsSubscriptionsSeekBackToAckedAndToEarlierMessages() {
    TopicName topic = TopicName.of(target().project, target().uniqueId("topic-retention"));
    target()
        .topics
        .createTopic(
            Topic.newBuilder()
                .setName(topic.toString())
                .setMessageRetentionDuration(PubSubScenarios.seconds(3600))
                .build());
    SubscriptionName subscription = target().createSubscription(topic, Subscription.newBuilder());
    target().publish(topic, "retained");
    List<ReceivedMessage> first = target().pullExactly(subscription, 1);
    target().acknowledge(subscription, first);
    SubscriptionName later = target().createSubscription(topic, Subscription.newBuilder());
    Timestamp before = earlier(first.get(0).getMessage().getPublishTime());

    target().seek(subscription, before);
    target().seek(later, before);

    for (SubscriptionName name : List.of(subscription, later)) {
      List<ReceivedMessage> again = target().pullExactly(name, 1);
      assertThat(PubSubScenarios.text(again.get(0))).isEqualTo("retained");
      target().acknowledge(name, again);
    }
  }

  @Test
  void aSubscriptionShowsItsTopicsRetention() {
    assumeDocumented(Divergence.TOPIC_RETENTION_NOT_SHOWN_ON_SUBSCRIPTIONS);
    TopicName topic = TopicName.of(target().project, target().uniqueId("topic-retention-shown"));
    target()
        .topics
        .createTopic(
            Topic.newBuilder()
                .setName(topic.toString())
                .setMessageRetentionDuration(PubSubScenarios.seconds(3600))
                .build());
    SubscriptionName subscription = target().createSubscription(topic, Subscription.newBuilder());

    assertThat(
            target().subscriptions.getSubscription(subscription).getTopicMessageRetentionDuration())
        .isEqualTo(PubSubScenarios.seconds(3600));
  }

  // ---- schemas ----

  @Test
  void avroSchemasAreCreatedReadListedRevisedAndDeleted() {
    ProjectName project = ProjectName.of(target().project);
    String id = target().uniqueId("avro");
    SchemaName name = SchemaName.of(target().project, id);

    Schema created = target().schemas.createSchema(project, avro(AVRO_DEFINITION), id);

    assertThat(created.getName()).isEqualTo(name.toString());
    assertThat(created.getType()).isEqualTo(Schema.Type.AVRO);
    assertThat(created.getDefinition()).isEqualTo(AVRO_DEFINITION);
    assertThat(created.getRevisionId()).isNotEmpty();
    assertThat(target().schemas.getSchema(name)).isEqualTo(created);
    assertThat(
            target()
                .schemas
                .getSchema(
                    GetSchemaRequest.newBuilder()
                        .setName(name.toString())
                        .setView(SchemaView.BASIC)
                        .build())
                .getDefinition())
        .as("BASIC leaves the definition out")
        .isEmpty();
    assertThat(
            target()
                .schemas
                .listSchemas(
                    ListSchemasRequest.newBuilder()
                        .setParent(project.toString())
                        .setView(SchemaView.FULL)
                        .build())
                .iterateAll())
        .contains(created);
    assertThatThrownBy(() -> target().schemas.createSchema(project, avro(AVRO_DEFINITION), id))
        .isInstanceOf(AlreadyExistsException.class)
        .hasMessageEndingWith("ALREADY_EXISTS: Schema already exists");
    assertThatThrownBy(
            () ->
                target().schemas.createSchema(project, avro("{\"type\":\"record\"}"), id + "-bad"))
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("INVALID_ARGUMENT: Could not parse schema definition");
    assertThatThrownBy(
            () ->
                target()
                    .schemas
                    .createSchema(
                        project,
                        Schema.newBuilder().setDefinition(AVRO_DEFINITION).build(),
                        id + "-untyped"))
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageEndingWith("INVALID_ARGUMENT: Invalid schema type");
    assertThatThrownBy(() -> target().schemas.createSchema(project, avro(AVRO_DEFINITION), ""))
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("Invalid [schemas] name");

    String revised = AVRO_DEFINITION.replace("quantity", "count");
    Schema second = target().schemas.commitSchema(name, avro(revised));
    assertThat(second.getRevisionId()).isNotEqualTo(created.getRevisionId());
    assertThat(target().schemas.getSchema(name).getDefinition()).isEqualTo(revised);
    assertThat(target().schemas.getSchema(name + "@" + created.getRevisionId()).getDefinition())
        .isEqualTo(AVRO_DEFINITION);
    Schema rolledBack = target().schemas.rollbackSchema(name, created.getRevisionId());
    assertThat(rolledBack.getDefinition()).isEqualTo(AVRO_DEFINITION);
    assertThat(revisionIds(name))
        .containsExactlyInAnyOrder(
            created.getRevisionId(), second.getRevisionId(), rolledBack.getRevisionId());
    Schema deleted = target().schemas.deleteSchemaRevision(name + "@" + second.getRevisionId(), "");
    assertThat(deleted.getRevisionId()).isEqualTo(second.getRevisionId());
    assertThat(revisionIds(name))
        .containsExactlyInAnyOrder(created.getRevisionId(), rolledBack.getRevisionId());
    assertThatThrownBy(() -> target().schemas.getSchema(name + "@" + second.getRevisionId()))
        .isInstanceOf(NotFoundException.class)
        .hasMessageEndingWith("NOT_FOUND: Schema revision not found");
    assertThatThrownBy(() -> target().schemas.rollbackSchema(name, second.getRevisionId()))
        .isInstanceOf(NotFoundException.class);

    target().schemas.deleteSchema(name);
    assertThatThrownBy(() -> target().schemas.getSchema(name))
        .isInstanceOf(NotFoundException.class)
        .hasMessageEndingWith("NOT_FOUND: Schema not found");
    assertThatThrownBy(() -> target().schemas.deleteSchema(name))
        .isInstanceOf(NotFoundException.class);
  }

  @Test
  void schemasAreListedWithoutTheirDefinitionByDefault() {
    assumeDocumented(Divergence.SCHEMAS_LISTED_WITH_DEFINITION_BY_DEFAULT);
    ProjectName project = ProjectName.of(target().project);
    String id = target().uniqueId("avro-basic");
    target().schemas.createSchema(project, avro(AVRO_DEFINITION), id);

    List<Schema> listed = new ArrayList<>();
    target().schemas.listSchemas(project).iterateAll().forEach(listed::add);

    Schema mine =
        listed.stream()
            .filter(s -> s.getName().equals(SchemaName.of(target().project, id).toString()))
            .findFirst()
            .orElseThrow();
    assertThat(mine.getType()).isEqualTo(Schema.Type.AVRO);
    assertThat(mine.getDefinition()).as("the default view is BASIC").isEmpty();
    target().schemas.deleteSchema(SchemaName.of(target().project, id));
  }

  @Test
  void aSchemaRevisionRecordsWhenItWasCreated() {
    assumeDocumented(Divergence.SCHEMA_REVISION_TIME_NOT_WALL_CLOCK);
    String id = target().uniqueId("avro-time");
    Schema created =
        target().schemas.createSchema(ProjectName.of(target().project), avro(AVRO_DEFINITION), id);
    TopicName topic = target().createTopic("schema-time");
    SubscriptionName subscription = target().createSubscription(topic, Subscription.newBuilder());
    target().publish(topic, "now");
    ReceivedMessage message = target().pullExactly(subscription, 1).get(0);

    // Both times come from the server's clock, moments apart.
    assertThat(Snapshots.instant(created.getRevisionCreateTime()))
        .isBetween(
            Snapshots.instant(message.getMessage().getPublishTime()).minusSeconds(60),
            Snapshots.instant(message.getMessage().getPublishTime()));
    target().schemas.deleteSchema(SchemaName.of(target().project, id));
  }

  @Test
  void avroMessagesAreValidatedInJsonAndInBinary() {
    ProjectName project = ProjectName.of(target().project);
    String id = target().uniqueId("avro-validate");
    SchemaName name = SchemaName.of(target().project, id);
    target().schemas.createSchema(project, avro(AVRO_DEFINITION), id);

    target().schemas.validateSchema(project, avro(AVRO_DEFINITION));
    assertThatThrownBy(() -> target().schemas.validateSchema(project, avro("{\"type\":1}")))
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("Could not parse schema definition");

    validateMessage(name, Encoding.JSON, PubSubScenarios.utf8(AVRO_VALID_JSON));
    validateMessage(name, Encoding.BINARY, ByteString.copyFrom(AVRO_VALID_BINARY));
    target()
        .schemas
        .validateMessage(
            ValidateMessageRequest.newBuilder()
                .setParent(project.toString())
                .setSchema(avro(AVRO_DEFINITION))
                .setEncoding(Encoding.JSON)
                .setMessage(PubSubScenarios.utf8(AVRO_VALID_JSON))
                .build());
    assertThatThrownBy(
            () -> validateMessage(name, Encoding.JSON, PubSubScenarios.utf8("{\"id\":\"o-1\"}")))
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("Could not parse JSON Avro message");
    assertThatThrownBy(
            () -> validateMessage(name, Encoding.BINARY, ByteString.copyFrom(new byte[] {9})))
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("Could not parse binary Avro message");
    assertThatThrownBy(
            () ->
                validateMessage(
                    name, Encoding.ENCODING_UNSPECIFIED, PubSubScenarios.utf8(AVRO_VALID_JSON)))
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageEndingWith("INVALID_ARGUMENT: No encoding provided.");
    target().schemas.deleteSchema(name);
  }

  @Test
  void aTopicWithAnAvroSchemaAcceptsOnlyMessagesThatMatchIt() {
    ProjectName project = ProjectName.of(target().project);
    String id = target().uniqueId("avro-topic");
    SchemaName schema = SchemaName.of(target().project, id);
    Schema created = target().schemas.createSchema(project, avro(AVRO_DEFINITION), id);
    TopicName topic = target().topicName("avro-topic");
    target()
        .topics
        .createTopic(
            Topic.newBuilder()
                .setName(topic.toString())
                .setSchemaSettings(
                    SchemaSettings.newBuilder()
                        .setSchema(schema.toString())
                        .setEncoding(Encoding.JSON))
                .build());
    SubscriptionName subscription = target().createSubscription(topic, Subscription.newBuilder());

    target().publish(topic, AVRO_VALID_JSON);
    assertThatThrownBy(() -> target().publish(topic, "{\"id\":1}"))
        .isInstanceOf(InvalidArgumentException.class);

    ReceivedMessage received = target().pullExactly(subscription, 1).get(0);
    assertThat(PubSubScenarios.text(received)).isEqualTo(AVRO_VALID_JSON);
    assertThat(received.getMessage().getAttributesMap())
        .containsEntry("googclient_schemaname", schema.toString())
        .containsEntry("googclient_schemaencoding", "JSON")
        .containsEntry("googclient_schemarevisionid", created.getRevisionId());
    target().acknowledge(subscription, List.of(received));

    assertThatThrownBy(
            () ->
                target()
                    .topics
                    .createTopic(
                        Topic.newBuilder()
                            .setName(target().topicName("avro-missing").toString())
                            .setSchemaSettings(
                                SchemaSettings.newBuilder()
                                    .setSchema(
                                        SchemaName.of(target().project, id + "-missing").toString())
                                    .setEncoding(Encoding.JSON))
                            .build()))
        .isInstanceOf(NotFoundException.class)
        .hasMessageEndingWith("NOT_FOUND: Schema could not be found");
    assertThatThrownBy(
            () ->
                target()
                    .topics
                    .createTopic(
                        Topic.newBuilder()
                            .setName(target().topicName("avro-no-encoding").toString())
                            .setSchemaSettings(
                                SchemaSettings.newBuilder().setSchema(schema.toString()))
                            .build()))
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageEndingWith("INVALID_ARGUMENT: Invalid schema encoding provided");

    target().schemas.deleteSchema(schema);
    assertThat(target().topics.getTopic(topic).getSchemaSettings().getSchema())
        .isEqualTo("_deleted-schema_");
    assertThatThrownBy(() -> target().publish(topic, AVRO_VALID_JSON))
        .isInstanceOf(NotFoundException.class)
        .hasMessageEndingWith("NOT_FOUND: Schema associated with topic deleted.");
    assertThatThrownBy(
            () ->
                updateTopic(
                    Topic.newBuilder()
                        .setName(topic.toString())
                        .setMessageRetentionDuration(PubSubScenarios.seconds(600)),
                    "message_retention_duration"))
        .as("the deleted schema is checked again, whatever the mask names")
        .isInstanceOf(NotFoundException.class)
        .hasMessageEndingWith("NOT_FOUND: Schema could not be found");
    Topic withoutSchema =
        updateTopic(Topic.newBuilder().setName(topic.toString()), "schema_settings");
    assertThat(withoutSchema.hasSchemaSettings()).isFalse();
    target().publish(topic, "no longer validated");
    assertThat(target().pullExactly(subscription, 1))
        .extracting(PubSubScenarios::text)
        .containsExactly("no longer validated");
  }

  @Test
  void protocolBufferSchemasValidateJsonAndBinaryMessages() {
    assumeDocumented(Divergence.PROTOCOL_BUFFER_SCHEMAS_UNIMPLEMENTED);
    ProjectName project = ProjectName.of(target().project);
    String id = target().uniqueId("proto");
    SchemaName name = SchemaName.of(target().project, id);

    Schema created = target().schemas.createSchema(project, proto(PROTO_DEFINITION), id);

    assertThat(created.getType()).isEqualTo(Schema.Type.PROTOCOL_BUFFER);
    validateMessage(
        name,
        Encoding.JSON,
        PubSubScenarios.utf8(
            "{\"id\":\"o-1\",\"quantity\":3,\"tags\":{\"a\":\"b\"},\"status\":\"SHIPPED\"}"));
    validateMessage(name, Encoding.BINARY, ByteString.copyFrom(PROTO_VALID_BINARY));
    assertThatThrownBy(
            () -> validateMessage(name, Encoding.JSON, PubSubScenarios.utf8("{\"unknown\":1}")))
        .isInstanceOf(InvalidArgumentException.class);
    assertThatThrownBy(
            () ->
                validateMessage(name, Encoding.JSON, PubSubScenarios.utf8("{\"status\":\"LOST\"}")))
        .isInstanceOf(InvalidArgumentException.class);
    assertThatThrownBy(
            () ->
                validateMessage(
                    name, Encoding.BINARY, ByteString.copyFrom(new byte[] {0x0a, 5, 'o'})))
        .as("a truncated length-delimited field")
        .isInstanceOf(InvalidArgumentException.class);
    assertThatThrownBy(
            () ->
                target().schemas.validateSchema(project, proto("syntax = \"proto3\";\nmessage {")))
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("Could not parse schema definition");
    assertThatThrownBy(
            () ->
                target()
                    .schemas
                    .validateSchema(
                        project, proto("syntax = \"proto3\";\nmessage A { Missing m = 1; }")))
        .as("an undefined type")
        .isInstanceOf(InvalidArgumentException.class);

    TopicName topic = target().topicName("proto-topic");
    target()
        .topics
        .createTopic(
            Topic.newBuilder()
                .setName(topic.toString())
                .setSchemaSettings(
                    SchemaSettings.newBuilder()
                        .setSchema(name.toString())
                        .setEncoding(Encoding.BINARY))
                .build());
    target()
        .topics
        .publish(
            topic,
            List.of(
                PubsubMessage.newBuilder()
                    .setData(ByteString.copyFrom(PROTO_VALID_BINARY))
                    .build()));
    assertThatThrownBy(
            () ->
                target()
                    .topics
                    .publish(
                        topic,
                        List.of(
                            PubsubMessage.newBuilder()
                                .setData(ByteString.copyFrom(new byte[] {0x0a, 5, 'o'}))
                                .build())))
        .isInstanceOf(InvalidArgumentException.class);
  }

  // ---- helpers ----

  private Subscription update(
      SubscriptionName subscription, Subscription.Builder update, String path) {
    return target()
        .subscriptions
        .updateSubscription(
            UpdateSubscriptionRequest.newBuilder()
                .setSubscription(update.setName(subscription.toString()))
                .setUpdateMask(FieldMask.newBuilder().addPaths(path))
                .build());
  }

  private Topic updateTopic(Topic.Builder update, String path) {
    return target()
        .topics
        .updateTopic(
            UpdateTopicRequest.newBuilder()
                .setTopic(update)
                .setUpdateMask(FieldMask.newBuilder().addPaths(path))
                .build());
  }

  private String snapshotName(String prefix) {
    return "projects/" + target().project + "/snapshots/" + target().uniqueId(prefix);
  }

  private void seekToSnapshot(SubscriptionName subscription, String snapshot) {
    target()
        .subscriptions
        .seek(
            SeekRequest.newBuilder()
                .setSubscription(subscription.toString())
                .setSnapshot(snapshot)
                .build());
  }

  private void validateMessage(SchemaName schema, Encoding encoding, ByteString message) {
    target()
        .schemas
        .validateMessage(
            ValidateMessageRequest.newBuilder()
                .setParent("projects/" + target().project)
                .setName(schema.toString())
                .setEncoding(encoding)
                .setMessage(message)
                .build());
  }

  private List<String> revisionIds(SchemaName name) {
    List<String> ids = new ArrayList<>();
    target()
        .schemas
        .listSchemaRevisions(
            ListSchemaRevisionsRequest.newBuilder().setName(name.toString()).build())
        .iterateAll()
        .forEach(schema -> ids.add(schema.getRevisionId()));
    return ids;
  }

  static Schema avro(String definition) {
    return Schema.newBuilder().setType(Schema.Type.AVRO).setDefinition(definition).build();
  }

  static Schema proto(String definition) {
    return Schema.newBuilder()
        .setType(Schema.Type.PROTOCOL_BUFFER)
        .setDefinition(definition)
        .build();
  }

  /** Ten seconds before {@code time}. */
  static Timestamp earlier(Timestamp time) {
    return Timestamp.newBuilder().setSeconds(time.getSeconds() - 10).build();
  }
}
