package dev.pubsubworker.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.api.gax.rpc.BidiStream;
import com.google.api.gax.rpc.InvalidArgumentException;
import com.google.api.gax.rpc.NotFoundException;
import com.google.pubsub.v1.ReceivedMessage;
import com.google.pubsub.v1.StreamingPullRequest;
import com.google.pubsub.v1.StreamingPullResponse;
import com.google.pubsub.v1.Subscription;
import com.google.pubsub.v1.SubscriptionName;
import com.google.pubsub.v1.TopicName;
import dev.pubsubworker.testkit.ManualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * StreamingPull as other clients speak it (acks and modacks on the stream, flow control in the
 * first request), through the client's raw bidi stream.
 */
class StreamingPullProtocolTest {

  private static final ManualTime TIME = new ManualTime();
  private static EmbeddedPubSub server;
  private static PubSubTarget target;

  @BeforeAll
  static void start() {
    server = EmbeddedPubSub.newBuilder().setClock(TIME.clock()).start();
    target = new PubSubTarget(server.hostPort(), "streams");
  }

  @AfterAll
  static void stop() {
    target.close();
    server.close();
  }

  private static BidiStream<StreamingPullRequest, StreamingPullResponse> open(
      SubscriptionName subscription, long maxOutstandingMessages) {
    BidiStream<StreamingPullRequest, StreamingPullResponse> stream =
        target.subscriptions.streamingPullCallable().call();
    stream.send(
        StreamingPullRequest.newBuilder()
            .setSubscription(subscription.toString())
            .setStreamAckDeadlineSeconds(10)
            .setMaxOutstandingMessages(maxOutstandingMessages)
            .build());
    return stream;
  }

  private static List<ReceivedMessage> receive(
      Iterator<StreamingPullResponse> responses, int count) {
    List<ReceivedMessage> received = new ArrayList<>();
    while (received.size() < count) {
      received.addAll(responses.next().getReceivedMessagesList());
    }
    assertThat(received).hasSize(count);
    return received;
  }

  @Test
  void flow_control_holds_back_messages_until_outstanding_ones_are_acked() {
    TopicName topic = target.createTopic("flow");
    SubscriptionName subscription = target.createSubscription(topic, Subscription.newBuilder());
    target.publish(topic, "1", "2", "3", "4", "5");
    BidiStream<StreamingPullRequest, StreamingPullResponse> stream = open(subscription, 2);
    Iterator<StreamingPullResponse> responses = stream.iterator();

    List<ReceivedMessage> first = receive(responses, 2);
    assertThat(target.pullOnce(subscription)).as("others are still in the backlog").hasSize(3);
    stream.send(
        StreamingPullRequest.newBuilder()
            .addAckIds(first.get(0).getAckId())
            .addAckIds(first.get(1).getAckId())
            .build());
    stream.cancel();
  }

  @Test
  void on_exactly_once_in_stream_acks_and_modacks_are_confirmed_per_ack_id() {
    TopicName topic = target.createTopic("confirm");
    SubscriptionName subscription =
        target.createSubscription(
            topic, Subscription.newBuilder().setEnableExactlyOnceDelivery(true));
    target.publish(topic, "a", "b");
    BidiStream<StreamingPullRequest, StreamingPullResponse> stream = open(subscription, 0);
    Iterator<StreamingPullResponse> responses = stream.iterator();
    List<ReceivedMessage> received = receive(responses, 2);
    String a = received.get(0).getAckId();
    String b = received.get(1).getAckId();

    stream.send(
        StreamingPullRequest.newBuilder()
            .addModifyDeadlineAckIds(b)
            .addModifyDeadlineSeconds(60)
            .build());
    StreamingPullResponse modackConfirmation = responses.next();
    TIME.advance(Duration.ofSeconds(11));
    server.tick();
    stream.send(StreamingPullRequest.newBuilder().addAckIds(a).addAckIds(b).build());
    StreamingPullResponse ackConfirmation = next(responses, true);

    assertThat(modackConfirmation.getSubscriptionProperties().getExactlyOnceDeliveryEnabled())
        .isTrue();
    assertThat(modackConfirmation.getModifyAckDeadlineConfirmation().getAckIdsList())
        .containsExactly(b);
    assertThat(ackConfirmation.getAcknowledgeConfirmation().getAckIdsList()).containsExactly(b);
    assertThat(ackConfirmation.getAcknowledgeConfirmation().getInvalidAckIdsList())
        .containsExactly(a);
    stream.cancel();
  }

  @Test
  void a_delayed_in_stream_ack_is_confirmed_at_the_tick_that_applies_it() {
    TopicName topic = target.createTopic("delayed-confirm");
    SubscriptionName subscription =
        target.createSubscription(
            topic, Subscription.newBuilder().setEnableExactlyOnceDelivery(true));
    server.faults().delayAcks(subscription.getSubscription(), Duration.ofSeconds(3));
    try {
      target.publish(topic, "d");
      BidiStream<StreamingPullRequest, StreamingPullResponse> stream = open(subscription, 0);
      Iterator<StreamingPullResponse> responses = stream.iterator();
      String ackId = receive(responses, 1).get(0).getAckId();

      stream.send(StreamingPullRequest.newBuilder().addAckIds(ackId).build());
      await().atMost(Duration.ofSeconds(10)).until(() -> server.faults().hasPendingAcks());
      TIME.advance(Duration.ofSeconds(3));
      server.tick();

      assertThat(next(responses, true).getAcknowledgeConfirmation().getAckIdsList())
          .containsExactly(ackId);
      stream.cancel();
    } finally {
      server.faults().clearAll();
    }
  }

  /** The next response that is (or is not) an ack confirmation: a redelivery may come between. */
  private static StreamingPullResponse next(
      Iterator<StreamingPullResponse> responses, boolean confirmation) {
    while (true) {
      StreamingPullResponse response = responses.next();
      if (response.hasAcknowledgeConfirmation() == confirmation) {
        return response;
      }
    }
  }

  @Test
  void
      a_stream_is_refused_without_a_subscription_or_for_a_missing_one_and_ends_when_its_subscription_is_deleted() {
    BidiStream<StreamingPullRequest, StreamingPullResponse> unnamed =
        target.subscriptions.streamingPullCallable().call();
    unnamed.send(StreamingPullRequest.newBuilder().setStreamAckDeadlineSeconds(10).build());
    assertThatThrownBy(() -> unnamed.iterator().hasNext())
        .isInstanceOf(InvalidArgumentException.class)
        .hasMessageContaining("must name a subscription");

    Iterator<StreamingPullResponse> missing =
        open(target.subscriptionName("missing"), 0).iterator();
    assertThatThrownBy(missing::hasNext).isInstanceOf(NotFoundException.class);

    TopicName topic = target.createTopic("deleted");
    SubscriptionName subscription = target.createSubscription(topic, Subscription.newBuilder());
    target.publish(topic, "x");
    Iterator<StreamingPullResponse> responses = open(subscription, 0).iterator();
    receive(responses, 1);
    target.subscriptions.deleteSubscription(subscription);
    assertThatThrownBy(responses::hasNext)
        .isInstanceOf(NotFoundException.class)
        .hasMessageContaining("Subscription does not exist");
  }
}
