package dev.pubsubworker.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.api.core.ApiFuture;
import com.google.api.gax.rpc.BidiStream;
import com.google.api.gax.rpc.FailedPreconditionException;
import com.google.api.gax.rpc.UnavailableException;
import com.google.cloud.pubsub.v1.AckResponse;
import com.google.cloud.pubsub.v1.MessageReceiverWithAckResponse;
import com.google.cloud.pubsub.v1.Subscriber;
import com.google.protobuf.Empty;
import com.google.pubsub.v1.AcknowledgeRequest;
import com.google.pubsub.v1.ReceivedMessage;
import com.google.pubsub.v1.StreamingPullRequest;
import com.google.pubsub.v1.StreamingPullResponse;
import com.google.pubsub.v1.Subscription;
import com.google.pubsub.v1.SubscriptionName;
import com.google.pubsub.v1.TopicName;
import dev.pubsubworker.testkit.ManualTime;
import io.grpc.Status;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Each fault switch, through the real client, on a manual clock. */
class FaultsTest {

  private static final int ACK_DEADLINE_SECONDS = 10;

  private static final ManualTime TIME = new ManualTime();
  private static EmbeddedPubSub server;
  private static PubSubTarget target;

  @BeforeAll
  static void start() {
    server = EmbeddedPubSub.newBuilder().setClock(TIME.clock()).start();
    target = new PubSubTarget(server.hostPort(), "faults");
  }

  @AfterAll
  static void stop() {
    target.close();
    server.close();
  }

  @AfterEach
  void clearFaults() {
    server.faults().clearAll();
  }

  private static void elapse(Duration duration) {
    TIME.advance(duration);
    server.tick();
  }

  private SubscriptionName subscriptionWith(String text, Subscription.Builder settings) {
    TopicName topic = target.createTopic("fault");
    SubscriptionName subscription =
        target.createSubscription(topic, settings.setAckDeadlineSeconds(ACK_DEADLINE_SECONDS));
    target.publish(topic, text);
    return subscription;
  }

  @Test
  void dropped_acks_are_answered_but_the_message_comes_back_after_its_deadline() {
    SubscriptionName subscription = subscriptionWith("d", Subscription.newBuilder());
    server.faults().dropAcks(subscription.getSubscription());
    ReceivedMessage first = target.pullExactly(subscription, 1).get(0);

    target.acknowledge(subscription, List.of(first));
    assertThat(target.pullOnce(subscription)).isEmpty();
    elapse(Duration.ofSeconds(ACK_DEADLINE_SECONDS));

    assertThat(target.pullExactly(subscription, 1).get(0).getMessage().getMessageId())
        .isEqualTo(first.getMessage().getMessageId());
  }

  @Test
  void a_delayed_ack_is_answered_and_applied_only_when_the_clock_reaches_its_delay()
      throws Exception {
    SubscriptionName subscription = subscriptionWith("late", Subscription.newBuilder());
    server.faults().delayAcks(subscription.toString(), Duration.ofSeconds(5));
    ReceivedMessage first = target.pullExactly(subscription, 1).get(0);

    ApiFuture<Empty> ack = ackAsync(subscription, first.getAckId());
    await().atMost(Duration.ofSeconds(10)).until(() -> server.faults().hasPendingAcks());
    server.tick();
    assertThat(ack.isDone()).isFalse();
    elapse(Duration.ofSeconds(5));

    ack.get(10, TimeUnit.SECONDS);
    elapse(Duration.ofSeconds(ACK_DEADLINE_SECONDS));
    assertThat(target.pullOnce(subscription)).as("the delayed ack took effect").isEmpty();
  }

  @Test
  void
      on_exactly_once_an_ack_delayed_past_the_deadline_resolves_the_clients_ack_response_to_invalid()
          throws Exception {
    SubscriptionName subscription =
        subscriptionWith("eod", Subscription.newBuilder().setEnableExactlyOnceDelivery(true));
    server.faults().delayAcks(subscription.getSubscription(), Duration.ofMinutes(15));
    CompletableFuture<AckResponse> response = new CompletableFuture<>();
    Subscriber subscriber =
        Subscriber.newBuilder(
                subscription.toString(),
                (MessageReceiverWithAckResponse)
                    (message, consumer) -> {
                      if (response.isDone()) {
                        consumer.ack(); // the redelivery, once the late ack was refused
                        return;
                      }
                      try {
                        // Blocks this callback thread until the client resolves the ack.
                        response.complete(consumer.ack().get(60, TimeUnit.SECONDS));
                      } catch (Exception e) {
                        response.completeExceptionally(e);
                      }
                    })
            .setChannelProvider(target.channelProvider)
            .setCredentialsProvider(PubSubTarget.credentials())
            .build();
    subscriber.startAsync().awaitRunning();
    try {
      await().atMost(Duration.ofSeconds(10)).until(() -> server.faults().hasPendingAcks());
      server.faults().clear(subscription.getSubscription());
      // Past any lease the client asked for (it extends by at most 10 minutes at a time).
      elapse(Duration.ofMinutes(15));
      assertThat(response.get(30, TimeUnit.SECONDS)).isEqualTo(AckResponse.INVALID);
    } finally {
      subscriber.stopAsync().awaitTerminated(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void failed_acks_carry_the_chosen_status_and_leave_the_message_unacked() {
    SubscriptionName subscription = subscriptionWith("f", Subscription.newBuilder());
    server.faults().failAcks(subscription.getSubscription(), Status.Code.FAILED_PRECONDITION);
    ReceivedMessage first = target.pullExactly(subscription, 1).get(0);

    assertThatThrownBy(() -> target.acknowledge(subscription, List.of(first)))
        .isInstanceOf(FailedPreconditionException.class)
        .hasMessageContaining("Faults.failAcks");
    elapse(Duration.ofSeconds(ACK_DEADLINE_SECONDS));

    assertThat(target.pullExactly(subscription, 1)).hasSize(1);
  }

  @Test
  void a_duplicated_delivery_arrives_twice_under_two_ack_ids() {
    SubscriptionName subscription = subscriptionWith("twice", Subscription.newBuilder());
    server.faults().duplicateDeliveries(subscription.getSubscription(), 1);

    List<ReceivedMessage> received = target.pullExactly(subscription, 2);

    assertThat(received.get(0).getMessage().getMessageId())
        .isEqualTo(received.get(1).getMessage().getMessageId());
    assertThat(received.get(0).getAckId()).isNotEqualTo(received.get(1).getAckId());
    target.acknowledge(subscription, received.subList(0, 1));
    elapse(Duration.ofSeconds(ACK_DEADLINE_SECONDS));
    assertThat(target.pullOnce(subscription)).as("either ack id acks the message").isEmpty();
  }

  @Test
  void a_reset_stream_ends_with_unavailable_and_its_messages_return_at_their_deadline() {
    SubscriptionName subscription = subscriptionWith("reset", Subscription.newBuilder());
    BidiStream<StreamingPullRequest, StreamingPullResponse> stream =
        target.subscriptions.streamingPullCallable().call();
    stream.send(
        StreamingPullRequest.newBuilder()
            .setSubscription(subscription.toString())
            .setStreamAckDeadlineSeconds(ACK_DEADLINE_SECONDS)
            .build());
    Iterator<StreamingPullResponse> responses = stream.iterator();
    assertThat(responses.next().getReceivedMessagesCount()).isEqualTo(1);

    assertThat(server.faults().resetStreams(subscription.getSubscription())).isEqualTo(1);

    assertThatThrownBy(responses::hasNext).isInstanceOf(UnavailableException.class);
    assertThat(target.pullOnce(subscription)).isEmpty();
    elapse(Duration.ofSeconds(ACK_DEADLINE_SECONDS));
    assertThat(target.pullExactly(subscription, 1)).hasSize(1);
  }

  @Test
  void paused_delivery_holds_messages_until_resumed() {
    SubscriptionName subscription = subscriptionWith("paused", Subscription.newBuilder());
    server.faults().pauseDelivery(subscription.getSubscription());

    assertThat(target.pullOnce(subscription)).isEmpty();
    server.faults().resumeDelivery(subscription.getSubscription());

    assertThat(target.pullExactly(subscription, 1)).hasSize(1);
  }

  @Test
  void added_latency_holds_every_request_at_least_that_long() {
    SubscriptionName subscription = subscriptionWith("slow", Subscription.newBuilder());
    server.faults().addLatency(Duration.ofMillis(300));

    long start = System.nanoTime();
    target.subscriptions.getSubscription(subscription);

    assertThat(Duration.ofNanos(System.nanoTime() - start))
        .isGreaterThanOrEqualTo(Duration.ofMillis(300));
  }

  @Test
  void switches_refuse_nonsense() {
    assertThatThrownBy(() -> server.faults().delayAcks("s", Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("ack delay must be > 0, but was PT0S");
    assertThatThrownBy(() -> server.faults().failAcks("s", Status.Code.OK))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> server.faults().duplicateDeliveries("s", 0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("count must be >= 1, but was 0");
    assertThatThrownBy(() -> server.faults().addLatency(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class);
  }

  private ApiFuture<Empty> ackAsync(SubscriptionName subscription, String ackId) {
    return target
        .subscriptions
        .acknowledgeCallable()
        .futureCall(
            AcknowledgeRequest.newBuilder()
                .setSubscription(subscription.toString())
                .addAckIds(ackId)
                .build());
  }
}
