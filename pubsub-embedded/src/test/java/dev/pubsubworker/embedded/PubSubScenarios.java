package dev.pubsubworker.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.api.core.ApiFuture;
import com.google.api.gax.rpc.AlreadyExistsException;
import com.google.api.gax.rpc.ApiException;
import com.google.api.gax.rpc.BidiStream;
import com.google.api.gax.rpc.InvalidArgumentException;
import com.google.api.gax.rpc.NotFoundException;
import com.google.api.gax.rpc.StatusCode;
import com.google.cloud.pubsub.v1.Publisher;
import com.google.cloud.pubsub.v1.Subscriber;
import com.google.protobuf.ByteString;
import com.google.protobuf.FieldMask;
import com.google.protobuf.Timestamp;
import com.google.pubsub.v1.AcknowledgeRequest;
import com.google.pubsub.v1.DeadLetterPolicy;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.PushConfig;
import com.google.pubsub.v1.ReceivedMessage;
import com.google.pubsub.v1.RetryPolicy;
import com.google.pubsub.v1.StreamingPullRequest;
import com.google.pubsub.v1.StreamingPullResponse;
import com.google.pubsub.v1.Subscription;
import com.google.pubsub.v1.SubscriptionName;
import com.google.pubsub.v1.TopicName;
import com.google.pubsub.v1.UpdateSubscriptionRequest;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.Test;

/**
 * The differential suite: every scenario runs, with the same assertions and the real client,
 * against Google's emulator ({@link EmulatorScenariosTest}) and the embedded server ({@link
 * EmbeddedScenariosTest}). Deadlines are Pub/Sub's minimum, 10 s; on the emulator that time really
 * passes, on the embedded server a manual clock is advanced. The scenarios of the admin surface
 * (snapshots, schemas, publish limits, update masks, retention) are inherited from {@link
 * AdminSurfaceScenarios}.
 */
abstract class PubSubScenarios extends AdminSurfaceScenarios {

  /** Pub/Sub's minimum ack deadline. */
  static final int ACK_DEADLINE_SECONDS = 10;

  /** How long a Pull that should find nothing is given. */
  static final Duration QUIET = Duration.ofMillis(1500);

  /** The server under test. */
  @Override
  abstract PubSubTarget target();

  /**
   * Lets {@code duration} pass on the server's clock: real time on the emulator (whose clock is the
   * wall clock), a manual clock advance on the embedded server.
   */
  abstract void elapse(Duration duration);

  /**
   * Waits until the server counts {@code count} open StreamingPull streams on {@code subscription}.
   */
  abstract void awaitOpenStreams(SubscriptionName subscription, int count);

  /** Where a server departs from Google's documentation (see pubsub-embedded/README.md). */
  enum Divergence {
    /**
     * A StreamingPull stream whose process is killed keeps being dealt the subscription's messages,
     * so they never reach another subscriber; a cancelled stream's messages come back at their
     * deadline only sometimes (seen: not within 20 s on one CI run, at the deadline on the others).
     * Documented: outstanding messages are redelivered once their ack deadline passes, and a closed
     * stream gets nothing.
     */
    KILLED_STREAM_KEEPS_MESSAGES,
    /**
     * On an exactly-once subscription, an ack id whose deadline has passed is still accepted until
     * the message is delivered again. Documented: the request fails with INVALID_ARGUMENT.
     */
    EXPIRED_ACK_ID_ACCEPTED,
    /**
     * The retry policy is ignored: a nacked message comes back at once. Documented: after the
     * policy's backoff.
     */
    RETRY_POLICY_IGNORED,
    /**
     * delivery_attempt is set on subscriptions with a retry policy but no dead-letter policy.
     * Documented: 0 without a dead-letter policy.
     */
    DELIVERY_ATTEMPT_WITHOUT_DEAD_LETTER_POLICY,
    /**
     * An update mask path inside a policy ({@code dead_letter_policy.max_delivery_attempts}, as in
     * Google's UpdateDeadLetterPolicyExample) is refused as "not a known Subscription field".
     * Documented: paths name fields, nested ones included.
     */
    NESTED_UPDATE_MASK_REFUSED,
    /**
     * An update mask naming {@code labels} is refused on topics and subscriptions ("labels is not a
     * known Topic field"). Documented: labels are updated like any other field.
     */
    LABELS_NOT_UPDATABLE,
    /**
     * A subscription's message_retention_duration over 7 days is refused. Documented: up to 31
     * days.
     */
    SUBSCRIPTION_RETENTION_CAPPED_AT_7_DAYS,
    /** An expiration_policy.ttl of 1 hour is accepted. Documented: the minimum is 1 day. */
    EXPIRATION_TTL_UNCHECKED,
    /**
     * Publish accepts more than 100 attributes, keys over 256 bytes, values over 1,024 bytes, keys
     * starting with "goog" and ordering keys over 1,024 bytes; a request over 10 MB gets no answer
     * until the client's deadline. Documented: each is refused with INVALID_ARGUMENT.
     */
    PUBLISH_LIMITS_NOT_ENFORCED,
    /**
     * CreateSnapshot without a name is refused ("Invalid [snapshots] name: (name=)"). Documented:
     * the server picks a name.
     */
    SNAPSHOT_NAME_REQUIRED,
    /** UpdateSnapshot answers UNIMPLEMENTED. Documented: it updates labels and expire_time. */
    UPDATE_SNAPSHOT_UNIMPLEMENTED,
    /**
     * Seeking a subscription to a snapshot taken from another subscription of the topic leaves it
     * with no messages. Documented: the subscription takes the snapshot's acknowledgment state.
     */
    SEEK_TO_ANOTHER_SUBSCRIPTIONS_SNAPSHOT_FINDS_NOTHING,
    /**
     * A subscription of a topic with a message_retention_duration does not show it in
     * topic_message_retention_duration. Documented: the field is set in the server's responses.
     */
    TOPIC_RETENTION_NOT_SHOWN_ON_SUBSCRIPTIONS,
    /**
     * Protocol Buffer schemas answer "UNIMPLEMENTED: Protocol buffer support not implemented in
     * emulator". Documented: PROTOCOL_BUFFER is a schema type.
     */
    PROTOCOL_BUFFER_SCHEMAS_UNIMPLEMENTED,
    /** ListSchemas without a view includes definitions. Documented: the default view is BASIC. */
    SCHEMAS_LISTED_WITH_DEFINITION_BY_DEFAULT,
    /**
     * revision_create_time is seconds since the emulator started, not the time of day. Documented:
     * the timestamp the revision was created.
     */
    SCHEMA_REVISION_TIME_NOT_WALL_CLOCK,
    /**
     * A stream is sent more than the {@code max_outstanding_messages} its first request set.
     * Documented: once that many messages are outstanding, the server stops sending until fewer
     * are.
     */
    WINDOW_IGNORED,
    /**
     * Each open stream is served in turns, up to 100 messages every 50 ms, whatever the others
     * hold: a backlog smaller than that goes whole to the stream served first, and a stream that
     * opened a turn before another gets up to 100 messages more. Documented: Pub/Sub balances a
     * subscription's messages over its open streams.
     */
    STREAMS_SERVED_IN_TURNS
  }

  /** The documented behaviours this server does not have. */
  @Override
  abstract Set<Divergence> divergences();

  // ---- scenarios ----

  @Test
  void publishedMessagesArePulledWithIdsTimesAndAttributesThenAckedForGood() throws Exception {
    TopicName topic = createTopic("basic");
    SubscriptionName subscription = createSubscription(topic, Subscription.newBuilder());
    Map<String, String> ids = new HashMap<>();
    Publisher publisher = target().publisher(topic).build();
    try {
      for (int i = 0; i < 3; i++) {
        ApiFuture<String> id =
            publisher.publish(
                PubsubMessage.newBuilder()
                    .setData(ByteString.copyFromUtf8("m" + i))
                    .putAttributes("index", Integer.toString(i))
                    .build());
        ids.put(id.get(10, TimeUnit.SECONDS), "m" + i);
      }
    } finally {
      publisher.shutdown();
      publisher.awaitTermination(10, TimeUnit.SECONDS);
    }

    List<ReceivedMessage> received = pullExactly(subscription, 3);

    for (ReceivedMessage m : received) {
      assertThat(ids).containsEntry(m.getMessage().getMessageId(), text(m));
      assertThat(m.getMessage().getAttributesMap()).containsEntry("index", text(m).substring(1));
      assertThat(m.getMessage().getPublishTime().getSeconds()).isPositive();
      assertThat(m.getDeliveryAttempt()).isZero();
      assertThat(m.getAckId()).isNotEmpty();
    }
    acknowledge(subscription, received);
    assertThat(pullOnce(subscription)).isEmpty();
  }

  @Test
  void adminErrorsAreNotFoundAlreadyExistsAndInvalidArgument() {
    TopicName topic = createTopic("admin");
    SubscriptionName subscription = createSubscription(topic, Subscription.newBuilder());
    TopicName missingTopic = target().topicName("missing");
    SubscriptionName missingSubscription = target().subscriptionName("missing");

    assertThatThrownBy(() -> target().topics.getTopic(missingTopic))
        .isInstanceOf(NotFoundException.class)
        .hasMessageEndingWith("NOT_FOUND: Topic not found");
    assertThatThrownBy(() -> target().topics.createTopic(topic))
        .isInstanceOf(AlreadyExistsException.class)
        .hasMessageEndingWith("ALREADY_EXISTS: Topic already exists");
    assertThatThrownBy(
            () ->
                target()
                    .topics
                    .publish(
                        missingTopic,
                        List.of(PubsubMessage.newBuilder().setData(utf8("x")).build())))
        .isInstanceOf(NotFoundException.class);
    assertThatThrownBy(() -> target().topics.deleteTopic(missingTopic))
        .isInstanceOf(NotFoundException.class);
    assertThatThrownBy(
            () ->
                target()
                    .subscriptions
                    .createSubscription(
                        missingSubscription, missingTopic, PushConfig.getDefaultInstance(), 10))
        .isInstanceOf(NotFoundException.class);
    assertThatThrownBy(
            () ->
                target()
                    .subscriptions
                    .createSubscription(subscription, topic, PushConfig.getDefaultInstance(), 10))
        .isInstanceOf(AlreadyExistsException.class)
        .hasMessageEndingWith("ALREADY_EXISTS: Subscription already exists");
    assertThatThrownBy(() -> target().subscriptions.getSubscription(missingSubscription))
        .isInstanceOf(NotFoundException.class)
        .hasMessageEndingWith("NOT_FOUND: Subscription does not exist");
    assertThatThrownBy(() -> target().subscriptions.deleteSubscription(missingSubscription))
        .isInstanceOf(NotFoundException.class);
    assertThatThrownBy(() -> target().subscriptions.acknowledge(subscription, List.of("junk")))
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageEndingWith("INVALID_ARGUMENT: Invalid ack id (ack_id=junk)");
    assertThatThrownBy(
            () -> target().topics.createTopic("projects/" + target().project + "/topics/1-bad"))
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageEndingWith(
            "INVALID_ARGUMENT: Invalid [topics] name: (name=projects/"
                + target().project
                + "/topics/1-bad)");
    assertThatThrownBy(
            () ->
                target()
                    .subscriptions
                    .pull(
                        "projects/"
                            + target().project
                            + "/subscriptions/"
                            + missingSubscription.getSubscription(),
                        1))
        .isInstanceOf(NotFoundException.class);
  }

  @Test
  void anUnackedMessageComesBackAfterItsDeadlineAndAModackPushesTheDeadlineOut() throws Exception {
    TopicName topic = createTopic("expiry");
    SubscriptionName subscription =
        createSubscription(topic, Subscription.newBuilder().setAckDeadlineSeconds(10));
    publish(topic, "dropped", "extended");
    Map<String, ReceivedMessage> first = byText(pullExactly(subscription, 2));
    target()
        .subscriptions
        .modifyAckDeadline(subscription, List.of(first.get("extended").getAckId()), 60);

    assertThat(pullOnce(subscription)).as("nothing is redelivered before the deadline").isEmpty();
    elapse(Duration.ofSeconds(ACK_DEADLINE_SECONDS + 1));

    List<ReceivedMessage> again = pullExactly(subscription, 1);
    assertThat(text(again.get(0))).isEqualTo("dropped");
    assertThat(again.get(0).getMessage().getMessageId())
        .isEqualTo(first.get("dropped").getMessage().getMessageId());
    assertThat(pullOnce(subscription)).as("the extended lease still holds").isEmpty();
    acknowledge(subscription, again);
    acknowledge(subscription, List.of(first.get("extended")));
  }

  @Test
  void aNackedMessageIsRedeliveredAtOnceWithoutARetryPolicy() {
    TopicName topic = createTopic("nack");
    SubscriptionName subscription = createSubscription(topic, Subscription.newBuilder());
    publish(topic, "n");
    ReceivedMessage first = pullExactly(subscription, 1).get(0);

    nack(subscription, first);

    ReceivedMessage again = pullExactly(subscription, 1).get(0);
    assertThat(again.getMessage().getMessageId()).isEqualTo(first.getMessage().getMessageId());
    acknowledge(subscription, List.of(again));
  }

  @Test
  void aNackedMessageWaitsForTheRetryPolicysMinimumBackoff() {
    assumeDocumented(Divergence.RETRY_POLICY_IGNORED);
    TopicName topic = createTopic("backoff");
    SubscriptionName subscription =
        createSubscription(
            topic,
            Subscription.newBuilder()
                .setRetryPolicy(
                    RetryPolicy.newBuilder()
                        .setMinimumBackoff(seconds(4))
                        .setMaximumBackoff(seconds(30))));
    publish(topic, "b");
    ReceivedMessage first = pullExactly(subscription, 1).get(0);

    nack(subscription, first);

    assertThat(pullOnce(subscription)).as("not redelivered within the backoff").isEmpty();
    elapse(Duration.ofSeconds(4));
    ReceivedMessage again = pullExactly(subscription, 1).get(0);
    assertThat(again.getMessage().getMessageId()).isEqualTo(first.getMessage().getMessageId());
    acknowledge(subscription, List.of(again));
  }

  @Test
  void afterMaxDeliveryAttemptsAMessageIsForwardedToTheDeadLetterTopic() {
    TopicName topic = createTopic("dl-source");
    TopicName deadLetters = createTopic("dl-topic");
    SubscriptionName deadLetterSubscription =
        createSubscription(deadLetters, Subscription.newBuilder());
    SubscriptionName subscription =
        createSubscription(
            topic,
            Subscription.newBuilder()
                .setDeadLetterPolicy(
                    DeadLetterPolicy.newBuilder()
                        .setDeadLetterTopic(deadLetters.toString())
                        .setMaxDeliveryAttempts(5)));
    publish(topic, "poison");

    for (int attempt = 1; attempt <= 5; attempt++) {
      ReceivedMessage delivery = pullExactly(subscription, 1).get(0);
      assertThat(delivery.getDeliveryAttempt()).as("delivery attempt").isEqualTo(attempt);
      nack(subscription, delivery);
    }

    assertThat(pullOnce(subscription)).as("gone from the source subscription").isEmpty();
    ReceivedMessage dead = pullExactly(deadLetterSubscription, 1).get(0);
    assertThat(text(dead)).isEqualTo("poison");
    acknowledge(deadLetterSubscription, List.of(dead));
  }

  @Test
  void messagesWithAnOrderingKeyReachTheSubscriberInPublishOrder() throws Exception {
    TopicName topic = createTopic("ordering");
    SubscriptionName subscription =
        createSubscription(topic, Subscription.newBuilder().setEnableMessageOrdering(true));
    Map<String, List<String>> published = new LinkedHashMap<>();
    Publisher publisher = target().publisher(topic).setEnableMessageOrdering(true).build();
    try {
      // One publish at a time, the keys interleaved. With all 30 handed to the client at once, the
      // ordering-key publisher once stopped sending two of the keys (20 of 30 futures pending after
      // 60 s, no call in flight, every publisher thread idle); the cause is not found. What this
      // scenario checks, delivery in publish order per key, does not need them in flight at once.
      for (int i = 0; i < 30; i++) {
        String key = "key-" + (i % 3);
        String data = key + "/" + i;
        published.computeIfAbsent(key, k -> new ArrayList<>()).add(data);
        awaitPublished(
            List.of(
                publisher.publish(
                    PubsubMessage.newBuilder().setData(utf8(data)).setOrderingKey(key).build())));
      }
    } finally {
      publisher.shutdown();
      publisher.awaitTermination(10, TimeUnit.SECONDS);
    }

    Map<String, List<String>> received = new HashMap<>();
    Subscriber subscriber =
        target()
            .subscriber(
                subscription,
                (message, consumer) -> {
                  synchronized (received) {
                    received
                        .computeIfAbsent(message.getOrderingKey(), k -> new ArrayList<>())
                        .add(message.getData().toStringUtf8());
                  }
                  consumer.ack();
                })
            .build();
    subscriber.startAsync().awaitRunning();
    try {
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () -> {
                synchronized (received) {
                  return received.values().stream().mapToInt(List::size).sum() >= 30;
                }
              });
    } finally {
      subscriber.stopAsync().awaitTerminated(30, TimeUnit.SECONDS);
    }
    synchronized (received) {
      assertThat(received).isEqualTo(published);
    }
  }

  @Test
  void exactlyOnceAcksAreConfirmedAndAnAckIdReplacedByARedeliveryIsReportedInvalid() {
    TopicName topic = createTopic("eod");
    SubscriptionName subscription =
        createSubscription(
            topic,
            Subscription.newBuilder()
                .setAckDeadlineSeconds(ACK_DEADLINE_SECONDS)
                .setEnableExactlyOnceDelivery(true));
    publish(topic, "late", "on-time");
    Map<String, ReceivedMessage> first = byText(pullExactly(subscription, 2));
    acknowledge(subscription, List.of(first.get("on-time")));

    elapse(Duration.ofSeconds(ACK_DEADLINE_SECONDS + 1));
    ReceivedMessage again = pullExactly(subscription, 1).get(0);
    assertThat(text(again)).isEqualTo("late");

    String expired = first.get("late").getAckId();
    assertInvalidAckId(subscription, expired);
    acknowledge(subscription, List.of(again));
    assertThat(pullOnce(subscription)).isEmpty();
  }

  @Test
  void anExactlyOnceAckIdIsInvalidAsSoonAsItsDeadlinePasses() {
    assumeDocumented(Divergence.EXPIRED_ACK_ID_ACCEPTED);
    TopicName topic = createTopic("eod-expired");
    SubscriptionName subscription =
        createSubscription(
            topic,
            Subscription.newBuilder()
                .setAckDeadlineSeconds(ACK_DEADLINE_SECONDS)
                .setEnableExactlyOnceDelivery(true));
    publish(topic, "late");
    ReceivedMessage first = pullExactly(subscription, 1).get(0);

    elapse(Duration.ofSeconds(ACK_DEADLINE_SECONDS + 1));

    assertInvalidAckId(subscription, first.getAckId());
    ReceivedMessage again = pullExactly(subscription, 1).get(0);
    assertThat(again.getMessage().getMessageId()).isEqualTo(first.getMessage().getMessageId());
    acknowledge(subscription, List.of(again));
  }

  @Test
  void deliveryAttemptIsZeroWithoutADeadLetterPolicyEvenWithARetryPolicy() {
    assumeDocumented(Divergence.DELIVERY_ATTEMPT_WITHOUT_DEAD_LETTER_POLICY);
    TopicName topic = createTopic("attempts");
    SubscriptionName subscription =
        createSubscription(
            topic,
            Subscription.newBuilder()
                .setRetryPolicy(
                    RetryPolicy.newBuilder()
                        .setMinimumBackoff(seconds(0))
                        .setMaximumBackoff(seconds(1))));
    publish(topic, "a");
    ReceivedMessage first = pullExactly(subscription, 1).get(0);
    nack(subscription, first);

    ReceivedMessage again = pullExactly(subscription, 1).get(0);

    assertThat(first.getDeliveryAttempt()).isZero();
    assertThat(again.getDeliveryAttempt()).isZero();
    acknowledge(subscription, List.of(again));
  }

  private void assertInvalidAckId(SubscriptionName subscription, String ackId) {
    ApiException failure =
        (ApiException)
            catchThrowable(
                () ->
                    target()
                        .subscriptions
                        .acknowledgeCallable()
                        .call(
                            AcknowledgeRequest.newBuilder()
                                .setSubscription(subscription.toString())
                                .addAckIds(ackId)
                                .build()));
    assertThat(failure).as("acking an invalid ack id fails").isNotNull();
    assertThat(failure.getStatusCode().getCode()).isEqualTo(StatusCode.Code.INVALID_ARGUMENT);
    assertThat(failure.getErrorDetails().getErrorInfo().getReason())
        .isEqualTo("EXACTLY_ONCE_ACKID_FAILURE");
    assertThat(failure.getErrorDetails().getErrorInfo().getMetadataMap())
        .containsEntry(ackId, "PERMANENT_FAILURE_INVALID_ACK_ID");
  }

  @Test
  void seekingToATimeRedeliversLaterMessagesAndSeekingPastThemAcksThem() {
    TopicName topic = createTopic("seek");
    SubscriptionName subscription =
        createSubscription(topic, Subscription.newBuilder().setRetainAckedMessages(true));
    publish(topic, "s1", "s2");
    List<ReceivedMessage> first = pullExactly(subscription, 2);
    acknowledge(subscription, first);
    assertThat(pullOnce(subscription)).isEmpty();
    Timestamp earliest =
        first.stream()
            .map(m -> m.getMessage().getPublishTime())
            .min(
                Comparator.comparingLong(Timestamp::getSeconds)
                    .thenComparingInt(Timestamp::getNanos))
            .orElseThrow();

    seek(subscription, earliest);

    List<ReceivedMessage> again = pullExactly(subscription, 2);
    assertThat(again).extracting(PubSubScenarios::text).containsExactlyInAnyOrder("s1", "s2");

    seek(subscription, Timestamp.newBuilder().setSeconds(earliest.getSeconds() + 3600).build());

    assertThat(pullOnce(subscription)).as("seeking past the messages acks them").isEmpty();
  }

  @Test
  void aCancelledStreamGivesItsMessagesBackAtTheirDeadline() {
    assumeDocumented(Divergence.KILLED_STREAM_KEEPS_MESSAGES);
    TopicName topic = createTopic("cancel");
    SubscriptionName subscription =
        createSubscription(topic, Subscription.newBuilder().setAckDeadlineSeconds(10));
    publish(topic, "r1", "r2", "r3");

    BidiStream<StreamingPullRequest, StreamingPullResponse> stream =
        target().subscriptions.streamingPullCallable().call();
    stream.send(
        StreamingPullRequest.newBuilder()
            .setSubscription(subscription.toString())
            .setStreamAckDeadlineSeconds(ACK_DEADLINE_SECONDS)
            .build());
    List<String> held = new ArrayList<>();
    for (StreamingPullResponse response : stream) {
      response.getReceivedMessagesList().forEach(m -> held.add(text(m)));
      if (held.size() >= 3) {
        break;
      }
    }
    stream.cancel();
    assertThat(held).containsExactlyInAnyOrder("r1", "r2", "r3");
    assertThat(pullOnce(subscription)).as("still leased to the cancelled stream").isEmpty();

    elapse(Duration.ofSeconds(ACK_DEADLINE_SECONDS + 1));

    List<ReceivedMessage> again = pullExactly(subscription, 3);
    assertThat(again).extracting(PubSubScenarios::text).containsExactlyInAnyOrder("r1", "r2", "r3");
    acknowledge(subscription, again);
  }

  @Test
  void afterASubscriberProcessIsKilledNewMessagesAndThenItsHeldOnesAreDeliveredElsewhere()
      throws Exception {
    assumeDocumented(Divergence.KILLED_STREAM_KEEPS_MESSAGES);
    TopicName topic = createTopic("killed");
    SubscriptionName subscription =
        createSubscription(topic, Subscription.newBuilder().setAckDeadlineSeconds(10));
    publish(topic, "held-1", "held-2");
    Process worker =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp",
                System.getProperty("java.class.path"),
                StreamHoldingProcess.class.getName(),
                target().hostPort,
                subscription.toString())
            .redirectErrorStream(true)
            .start();
    try {
      BufferedReader out =
          new BufferedReader(
              new InputStreamReader(worker.getInputStream(), StandardCharsets.UTF_8));
      String line;
      do {
        line = out.readLine();
      } while (line != null && !line.equals("holding 2"));
      assertThat(line).as("the worker holds both messages").isEqualTo("holding 2");
    } finally {
      worker.destroyForcibly(); // SIGKILL: no goodbye on the stream
      worker.waitFor(20, TimeUnit.SECONDS);
    }

    publish(topic, "fresh-1", "fresh-2", "fresh-3");
    List<ReceivedMessage> fresh = pullExactly(subscription, 3);
    assertThat(fresh)
        .as("messages published after the kill are not dealt to the dead stream")
        .extracting(PubSubScenarios::text)
        .containsExactlyInAnyOrder("fresh-1", "fresh-2", "fresh-3");
    acknowledge(subscription, fresh);

    // Past any lease the dead client may have asked for (at most 600 s).
    elapse(Duration.ofSeconds(601));

    List<ReceivedMessage> held = pullExactly(subscription, 2);
    assertThat(held)
        .extracting(PubSubScenarios::text)
        .containsExactlyInAnyOrder("held-1", "held-2");
    acknowledge(subscription, held);
  }

  @Test
  void updatingASubscriptionChangesItsAckDeadline() {
    TopicName topic = createTopic("update");
    SubscriptionName subscription = createSubscription(topic, Subscription.newBuilder());

    Subscription updated =
        target()
            .subscriptions
            .updateSubscription(
                UpdateSubscriptionRequest.newBuilder()
                    .setSubscription(
                        Subscription.newBuilder()
                            .setName(subscription.toString())
                            .setAckDeadlineSeconds(42))
                    .setUpdateMask(FieldMask.newBuilder().addPaths("ack_deadline_seconds"))
                    .build());

    assertThat(updated.getAckDeadlineSeconds()).isEqualTo(42);
    assertThat(target().subscriptions.getSubscription(subscription).getAckDeadlineSeconds())
        .isEqualTo(42);
    assertThat(updated.getTopic()).isEqualTo(topic.toString());
  }

  // ---- spreading over streams ----

  /** How many clients share a subscription in the spreading scenarios. */
  static final int CLIENTS = 3;

  /** A backlog smaller than a client's window and than one response. */
  static final int SMALL_BACKLOG = 30;

  /** The backlog of the report that found one client getting all of it. */
  static final int LARGE_BACKLOG = 600;

  @Test
  void aSmallBacklogIsSharedFairlyByThreeClientsThatSendAWindow() {
    assumeDocumented(Divergence.STREAMS_SERVED_IN_TURNS);
    assertPublishedBacklogShared(SMALL_BACKLOG, HoldingSubscribers.FlowControl.WINDOW_SENT);
  }

  @Test
  void aSmallBacklogIsSharedFairlyByThreeClientsThatSendNoWindow() {
    assumeDocumented(Divergence.STREAMS_SERVED_IN_TURNS);
    assertPublishedBacklogShared(SMALL_BACKLOG, HoldingSubscribers.FlowControl.NO_WINDOW_SENT);
  }

  @Test
  void aLargeBacklogIsSharedFairlyByThreeClientsThatSendAWindow() {
    assertPublishedBacklogShared(LARGE_BACKLOG, HoldingSubscribers.FlowControl.WINDOW_SENT);
  }

  @Test
  void aLargeBacklogIsSharedFairlyByThreeClientsThatSendNoWindow() {
    assertPublishedBacklogShared(LARGE_BACKLOG, HoldingSubscribers.FlowControl.NO_WINDOW_SENT);
  }

  /**
   * Three clients connected, each holding what it gets; then a backlog published at once: every
   * message is delivered once, and each client holds a fair share of them.
   */
  private void assertPublishedBacklogShared(
      int backlog, HoldingSubscribers.FlowControl flowControl) {
    TopicName topic = createTopic("share");
    SubscriptionName subscription = createSubscription(topic, Subscription.newBuilder());
    try (HoldingSubscribers clients =
        HoldingSubscribers.start(target(), subscription, CLIENTS, flowControl)) {
      awaitOpenStreams(subscription, CLIENTS);

      publishBacklog(topic, backlog);

      assertSharedOnce(
          clients, backlog, backlog + " messages published to three clients, " + flowControl);
    }
  }

  @Test
  void aBacklogThatWaitsForTheClientsIsSharedFairlyOnceTheyStart() {
    assumeDocumented(Divergence.STREAMS_SERVED_IN_TURNS);
    TopicName topic = createTopic("share-waiting");
    SubscriptionName subscription = createSubscription(topic, Subscription.newBuilder());
    publishBacklog(topic, LARGE_BACKLOG);

    try (HoldingSubscribers clients =
        HoldingSubscribers.start(
            target(), subscription, CLIENTS, HoldingSubscribers.FlowControl.WINDOW_SENT)) {
      assertSharedOnce(
          clients, LARGE_BACKLOG, LARGE_BACKLOG + " messages waiting for three clients");
    }
  }

  private void assertSharedOnce(HoldingSubscribers clients, int backlog, String what) {
    awaitDeliveries(clients::total, backlog);
    List<Integer> shares = clients.shares();
    System.out.printf("%s: shares %s%n", what, shares);
    assertThat(clients.distinctIds()).as("every message, once").hasSize(backlog);
    assertFairShares(shares, backlog);
  }

  @Test
  void whenAClientLeavesItsOutstandingMessagesGoToTheOthersAtTheirDeadlines() {
    assumeDocumented(Divergence.STREAMS_SERVED_IN_TURNS);
    assumeDocumented(Divergence.KILLED_STREAM_KEEPS_MESSAGES);
    TopicName topic = createTopic("leaving");
    SubscriptionName subscription =
        createSubscription(topic, Subscription.newBuilder().setAckDeadlineSeconds(10));
    int backlog = 300;
    // The client that leaves never extends its leases: they end 10 s after each delivery.
    RawStream leaver = RawStream.open(target(), subscription, ACK_DEADLINE_SECONDS, 0);

    try (HoldingSubscribers stayers =
        HoldingSubscribers.start(
            target(), subscription, CLIENTS - 1, HoldingSubscribers.FlowControl.WINDOW_SENT)) {
      awaitOpenStreams(subscription, CLIENTS);
      publishBacklog(topic, backlog);
      awaitDeliveries(() -> leaver.count() + stayers.total(), backlog);
      List<Integer> before = stayers.shares();
      int left = leaver.count();
      List<Integer> shares = new ArrayList<>(before);
      shares.add(left);
      System.out.printf("%d messages, two stayers and a leaver: shares %s%n", backlog, shares);
      assertFairShares(shares, backlog);

      leaver.cancel();
      // Until the server has seen it go, it would still deal to it.
      awaitOpenStreams(subscription, CLIENTS - 1);
      elapse(Duration.ofSeconds(ACK_DEADLINE_SECONDS + 1));

      awaitDeliveries(stayers::total, backlog);
      List<Integer> takenOver = new ArrayList<>();
      List<String> redelivered = new ArrayList<>();
      for (int i = 0; i < CLIENTS - 1; i++) {
        List<String> ids = stayers.idsOf(i);
        takenOver.add(ids.size() - before.get(i));
        redelivered.addAll(ids.subList(before.get(i), ids.size()));
      }
      System.out.printf("the leaver's %d messages, taken over: %s%n", left, takenOver);
      assertThat(redelivered)
          .as("what the leaver held, each message once, and nothing of what the others hold")
          .containsExactlyInAnyOrderElementsOf(
              leaver.received().stream().map(m -> m.getMessage().getMessageId()).toList());
      assertFairShares(takenOver, left);
    }
  }

  @Test
  void aStreamIsNeverSentMoreThanItsWindow() {
    assumeDocumented(Divergence.WINDOW_IGNORED);
    TopicName topic = createTopic("window");
    SubscriptionName subscription = createSubscription(topic, Subscription.newBuilder());
    publishBacklog(topic, SMALL_BACKLOG);
    RawStream stream = RawStream.open(target(), subscription, 60, 5);
    try {
      awaitDeliveries(stream::count, 5);
      elapse(Duration.ofSeconds(1));
      await()
          .during(Duration.ofMillis(500))
          .atMost(Duration.ofSeconds(5))
          .until(() -> stream.count() == 5);
      assertThat(pullOnce(subscription)).as("the rest stays with the server").hasSize(10);

      stream.ack(stream.received().subList(0, 2));

      awaitDeliveries(stream::count, 7);
      elapse(Duration.ofSeconds(1));
      await()
          .during(Duration.ofMillis(500))
          .atMost(Duration.ofSeconds(5))
          .until(() -> stream.count() == 7);
    } finally {
      stream.cancel();
    }
  }

  /**
   * The tolerance of the spreading scenarios: every client's share is within a quarter of an even
   * share (for 600 messages over three clients, 150 to 250 each).
   */
  static void assertFairShares(List<Integer> shares, int total) {
    assertThat(shares.stream().mapToInt(Integer::intValue).sum()).isEqualTo(total);
    double even = (double) total / shares.size();
    for (int i = 0; i < shares.size(); i++) {
      assertThat((double) shares.get(i))
          .as("share of client %d in %s (even: %.1f, within a quarter of it)", i, shares, even)
          .isBetween(even * 0.75, even * 1.25);
    }
  }

  /**
   * Waits until {@code received} reaches {@code count}, letting time pass on the server's clock in
   * steps of 250 ms meanwhile (a stream takes more messages the longer it has been open).
   */
  void awaitDeliveries(IntSupplier received, int count) {
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(100))
        .until(
            () -> {
              if (received.getAsInt() >= count) {
                return true;
              }
              elapse(Duration.ofMillis(250));
              return false;
            });
  }

  /** Publishes {@code count} messages (at most 1,000) in one request. */
  void publishBacklog(TopicName topic, int count) {
    String[] texts = new String[count];
    for (int i = 0; i < count; i++) {
      texts[i] = "backlog-" + i;
    }
    publish(topic, texts);
  }

  // ---- helpers ----

  /**
   * Waits for every publish, at most 60 s in all (an ordering-key publisher retries a failed batch
   * without end). A timeout says how many had completed and where every thread was, so that a hang
   * can be told from a slow retry.
   */
  static void awaitPublished(List<ApiFuture<String>> futures) throws Exception {
    try {
      com.google.api.core.ApiFutures.allAsList(futures).get(60, TimeUnit.SECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      long done = futures.stream().filter(java.util.concurrent.Future::isDone).count();
      StringBuilder threads = new StringBuilder();
      Thread.getAllStackTraces()
          .forEach(
              (t, stack) -> {
                threads.append('\n').append(t.getName()).append(' ').append(t.getState());
                for (int i = 0; i < Math.min(8, stack.length); i++) {
                  threads.append("\n    at ").append(stack[i]);
                }
              });
      throw new AssertionError(
          done + " of " + futures.size() + " publishes completed within 60 s; threads:" + threads,
          e);
    }
  }

  TopicName createTopic(String prefix) {
    return target().createTopic(prefix);
  }

  SubscriptionName createSubscription(TopicName topic, Subscription.Builder settings) {
    return target().createSubscription(topic, settings);
  }

  void publish(TopicName topic, String... texts) {
    target().publish(topic, texts);
  }

  List<ReceivedMessage> pullExactly(SubscriptionName subscription, int count) {
    return target().pullExactly(subscription, count);
  }

  List<ReceivedMessage> pullOnce(SubscriptionName subscription) {
    return target().pullOnce(subscription);
  }

  void acknowledge(SubscriptionName subscription, List<ReceivedMessage> messages) {
    target().acknowledge(subscription, messages);
  }

  void nack(SubscriptionName subscription, ReceivedMessage message) {
    target().nack(subscription, message);
  }

  void seek(SubscriptionName subscription, Timestamp time) {
    target().seek(subscription, time);
  }

  static Map<String, ReceivedMessage> byText(List<ReceivedMessage> messages) {
    Map<String, ReceivedMessage> byText = new HashMap<>();
    messages.forEach(m -> byText.put(text(m), m));
    assertThat(byText).hasSize(messages.size());
    return byText;
  }

  static String text(ReceivedMessage message) {
    return message.getMessage().getData().toString(StandardCharsets.UTF_8);
  }

  static ByteString utf8(String text) {
    return ByteString.copyFromUtf8(text);
  }

  static com.google.protobuf.Duration seconds(long seconds) {
    return com.google.protobuf.Duration.newBuilder().setSeconds(seconds).build();
  }

  static Throwable catchThrowable(Runnable call) {
    try {
      call.run();
      return null;
    } catch (RuntimeException e) {
      return e;
    }
  }
}
