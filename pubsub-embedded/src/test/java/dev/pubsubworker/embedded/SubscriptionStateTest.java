package dev.pubsubworker.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.pubsub.v1.DeadLetterPolicy;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.ReceivedMessage;
import com.google.pubsub.v1.RetryPolicy;
import com.google.pubsub.v1.Subscription;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The delivery rules of one subscription, driven by hand through time: no server, no client. */
class SubscriptionStateTest {

  private static final String NAME = "projects/p/subscriptions/s";
  private static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");

  private final List<PubsubMessage> deadLettered = new ArrayList<>();
  private long sequence;

  private SubscriptionState state(Subscription.Builder config) {
    return new SubscriptionState(
        config.setName(NAME).setTopic("projects/p/topics/t").setAckDeadlineSeconds(10).build(),
        (topic, message) -> deadLettered.add(message));
  }

  private QueuedMessage publish(SubscriptionState state, String data, String orderingKey) {
    QueuedMessage message =
        new QueuedMessage(
            PubsubMessage.newBuilder()
                .setData(ByteString.copyFromUtf8(data))
                .setMessageId(Long.toString(++sequence))
                .setOrderingKey(orderingKey)
                .build(),
            sequence,
            T0);
    state.enqueue(message);
    return message;
  }

  private static ReceivedMessage deliver(SubscriptionState state, Instant now) {
    state.advanceTo(now);
    QueuedMessage next = state.nextReady(null);
    return next == null ? null : state.lease(next, null, 10, now);
  }

  @Test
  void a_lease_holds_the_message_until_its_deadline_then_it_is_redelivered_under_a_new_ack_id() {
    SubscriptionState state = state(Subscription.newBuilder());
    publish(state, "a", "");
    ReceivedMessage first = deliver(state, T0);

    assertThat(deliver(state, T0.plusMillis(9_999))).isNull();
    ReceivedMessage again = deliver(state, T0.plusSeconds(10));

    assertThat(again.getMessage().getMessageId()).isEqualTo(first.getMessage().getMessageId());
    assertThat(again.getAckId()).isNotEqualTo(first.getAckId());
  }

  @Test
  void a_modack_moves_the_deadline_and_an_ack_ends_the_message() {
    SubscriptionState state = state(Subscription.newBuilder());
    publish(state, "a", "");
    ReceivedMessage first = deliver(state, T0);

    state.modifyDeadline(first.getAckId(), 30, T0.plusSeconds(5));
    assertThat(deliver(state, T0.plusSeconds(34))).isNull();
    state.ack(first.getAckId());

    assertThat(deliver(state, T0.plusSeconds(3600))).isNull();
    assertThat(state.backlog()).isZero();
  }

  @Test
  void on_exactly_once_subscriptions_only_the_current_unexpired_ack_id_is_valid() {
    SubscriptionState state = state(Subscription.newBuilder().setEnableExactlyOnceDelivery(true));
    publish(state, "a", "");
    ReceivedMessage first = deliver(state, T0);

    assertThat(state.isValid(first.getAckId(), T0.plusSeconds(9))).isTrue();
    assertThat(state.isValid(first.getAckId(), T0.plusSeconds(10))).isFalse();
    ReceivedMessage again = deliver(state, T0.plusSeconds(10));
    assertThat(state.isValid(first.getAckId(), T0.plusSeconds(10))).isFalse();
    assertThat(state.isValid(again.getAckId(), T0.plusSeconds(10))).isTrue();
    assertThat(state.isValid("nonsense", T0)).isFalse();
  }

  @Test
  void without_exactly_once_an_old_ack_id_still_acks_the_message() {
    SubscriptionState state = state(Subscription.newBuilder());
    publish(state, "a", "");
    ReceivedMessage first = deliver(state, T0);
    deliver(state, T0.plusSeconds(10));

    assertThat(state.isValid(first.getAckId(), T0.plusSeconds(11))).isTrue();
    state.ack(first.getAckId());

    assertThat(state.backlog()).isZero();
    assertThat(deliver(state, T0.plusSeconds(100))).isNull();
  }

  @Test
  void the_retry_policy_doubles_the_backoff_from_the_minimum_up_to_the_maximum() {
    SubscriptionState state =
        state(
            Subscription.newBuilder()
                .setRetryPolicy(
                    RetryPolicy.newBuilder()
                        .setMinimumBackoff(com.google.protobuf.Duration.newBuilder().setSeconds(2))
                        .setMaximumBackoff(
                            com.google.protobuf.Duration.newBuilder().setSeconds(10))));

    assertThat(state.backoff(1)).isEqualTo(Duration.ofSeconds(2));
    assertThat(state.backoff(2)).isEqualTo(Duration.ofSeconds(4));
    assertThat(state.backoff(3)).isEqualTo(Duration.ofSeconds(8));
    assertThat(state.backoff(4)).isEqualTo(Duration.ofSeconds(10));
    assertThat(state.backoff(50)).isEqualTo(Duration.ofSeconds(10));
    assertThat(state(Subscription.newBuilder()).backoff(3)).isZero();
  }

  @Test
  void a_nacked_message_waits_out_its_backoff_and_so_does_an_expired_one() {
    SubscriptionState state =
        state(
            Subscription.newBuilder()
                .setRetryPolicy(
                    RetryPolicy.newBuilder()
                        .setMinimumBackoff(com.google.protobuf.Duration.newBuilder().setSeconds(5))
                        .setMaximumBackoff(
                            com.google.protobuf.Duration.newBuilder().setSeconds(60))));
    publish(state, "a", "");
    ReceivedMessage first = deliver(state, T0);

    state.modifyDeadline(first.getAckId(), 0, T0.plusSeconds(1));
    assertThat(deliver(state, T0.plusSeconds(5))).isNull();
    ReceivedMessage second = deliver(state, T0.plusSeconds(6));
    assertThat(second).isNotNull();

    // Second failure, by expiry at 16 s: backoff 10 s, so back at 26 s.
    assertThat(deliver(state, T0.plusSeconds(25))).isNull();
    assertThat(deliver(state, T0.plusSeconds(26))).isNotNull();
  }

  @Test
  void
      after_max_delivery_attempts_the_message_goes_to_the_dead_letter_sink_with_its_attempt_count() {
    SubscriptionState state =
        state(
            Subscription.newBuilder()
                .setDeadLetterPolicy(
                    DeadLetterPolicy.newBuilder()
                        .setDeadLetterTopic("projects/p/topics/dead")
                        .setMaxDeliveryAttempts(5)));
    publish(state, "poison", "");

    Instant now = T0;
    for (int attempt = 1; attempt <= 5; attempt++) {
      ReceivedMessage delivery = deliver(state, now);
      assertThat(delivery.getDeliveryAttempt()).isEqualTo(attempt);
      state.modifyDeadline(delivery.getAckId(), 0, now);
      now = now.plusSeconds(1);
    }

    assertThat(deliver(state, now)).isNull();
    assertThat(state.backlog()).isZero();
    assertThat(deadLettered).hasSize(1);
    assertThat(deadLettered.get(0).getData().toStringUtf8()).isEqualTo("poison");
    assertThat(deadLettered.get(0).getAttributesMap())
        .containsEntry("CloudPubSubDeadLetterSourceDeliveryCount", "5")
        .containsEntry("CloudPubSubDeadLetterSourceSubscription", "s");
  }

  @Test
  void
      with_ordering_a_key_goes_out_as_a_run_in_publish_order_and_a_nack_takes_back_the_rest_of_the_run() {
    SubscriptionState state = state(Subscription.newBuilder().setEnableMessageOrdering(true));
    publish(state, "k1", "k");
    publish(state, "k2", "k");
    publish(state, "other", "o");
    publish(state, "unkeyed", "");

    List<ReceivedMessage> firstRound = deliverAll(state, T0);
    assertThat(firstRound)
        .extracting(SubscriptionStateTest::text)
        .containsExactly("k1", "k2", "other", "unkeyed");

    state.modifyDeadline(firstRound.get(0).getAckId(), 0, T0);
    state.ack(firstRound.get(1).getAckId());

    List<ReceivedMessage> again = deliverAll(state, T0);
    assertThat(again)
        .as("k1 and, after it, k2 (whose old ack id no longer counts)")
        .extracting(SubscriptionStateTest::text)
        .containsExactly("k1", "k2");
    again.forEach(m -> state.ack(m.getAckId()));
    state.ack(firstRound.get(2).getAckId());
    state.ack(firstRound.get(3).getAckId());
    assertThat(state.backlog()).isZero();
  }

  @Test
  void with_ordering_the_rest_of_a_run_goes_only_to_the_stream_holding_its_start() {
    SubscriptionState state = state(Subscription.newBuilder().setEnableMessageOrdering(true));
    PullStream one = new PullStream(state, null, 10, 0, 0, T0);
    PullStream two = new PullStream(state, null, 10, 0, 0, T0);
    publish(state, "k1", "k");
    publish(state, "k2", "k");

    QueuedMessage first = state.nextReady(one);
    state.lease(first, one, 10, T0);

    assertThat(state.nextReady(two)).isNull();
    assertThat(state.nextReady(null)).isNull();
    QueuedMessage second = state.nextReady(one);
    assertThat(second.message.getData().toStringUtf8()).isEqualTo("k2");
    state.lease(second, one, 10, T0);

    publish(state, "k3", "k");
    assertThat(state.nextReady(two)).as("k3 follows the run on stream one").isNull();
    assertThat(state.nextReady(one).message.getData().toStringUtf8()).isEqualTo("k3");
  }

  @Test
  void with_ordering_an_expired_lease_restarts_the_key_from_that_message() {
    SubscriptionState state = state(Subscription.newBuilder().setEnableMessageOrdering(true));
    publish(state, "k1", "k");
    publish(state, "k2", "k");
    List<ReceivedMessage> first = deliverAll(state, T0);
    state.ack(first.get(0).getAckId());

    List<ReceivedMessage> again = deliverAll(state, T0.plusSeconds(10));

    assertThat(again).extracting(SubscriptionStateTest::text).containsExactly("k2");
  }

  // ---- dealing to streams ----

  private static PullStream stream(SubscriptionState state, long window, Instant openedAt) {
    PullStream stream = new PullStream(state, null, 10, window, 0, openedAt);
    state.streams.add(stream);
    return stream;
  }

  /** What the Broker does at each delivery, without a transport: deals until nothing moves. */
  private static List<ReceivedMessage> deal(SubscriptionState state, Instant now) {
    state.advanceTo(now);
    List<ReceivedMessage> dealt = new ArrayList<>();
    Set<PullStream> done = new HashSet<>();
    for (PullStream s = state.nextStream(now, done); s != null; s = state.nextStream(now, done)) {
      QueuedMessage next = state.nextReady(s);
      if (next == null) {
        done.add(s);
      } else {
        dealt.add(state.lease(next, s, s.ackDeadlineSeconds, now));
      }
    }
    return dealt;
  }

  private static List<Integer> holdings(PullStream... streams) {
    List<Integer> holdings = new ArrayList<>();
    for (PullStream stream : streams) {
      holdings.add(stream.outstanding.size());
    }
    return holdings;
  }

  private void publish(SubscriptionState state, int count) {
    for (int i = 0; i < count; i++) {
      publish(state, "m" + i, "");
    }
  }

  @Test
  void messages_are_dealt_in_turn_to_the_stream_holding_the_fewest() {
    SubscriptionState state = state(Subscription.newBuilder());
    PullStream a = stream(state, 0, T0);
    PullStream b = stream(state, 0, T0);
    PullStream c = stream(state, 0, T0);
    publish(state, 7);

    List<ReceivedMessage> dealt = deal(state, T0);

    assertThat(dealt).hasSize(7);
    assertThat(holdings(a, b, c)).containsExactly(3, 2, 2);
    // The next one goes to a stream holding two, the one served longest ago: b.
    publish(state, "m7", "");
    deal(state, T0);
    assertThat(holdings(a, b, c)).containsExactly(3, 3, 2);
  }

  @Test
  void a_stream_is_never_dealt_more_than_its_window_and_the_others_share_the_rest() {
    SubscriptionState state = state(Subscription.newBuilder());
    PullStream small = stream(state, 2, T0);
    PullStream a = stream(state, 1000, T0);
    PullStream b = stream(state, 0, T0);
    publish(state, 12);

    deal(state, T0);

    assertThat(holdings(small, a, b)).containsExactly(2, 5, 5);
  }

  @Test
  void a_new_stream_ramps_up_with_time_and_with_its_acks() {
    SubscriptionState state = state(Subscription.newBuilder());
    PullStream alone = stream(state, 1000, T0);
    publish(state, 600);

    List<ReceivedMessage> first = deal(state, T0);
    assertThat(first).as("at once").hasSize((int) PullStream.RAMP_START);

    state.ack(first.get(0).getAckId());
    state.ack(first.get(1).getAckId());
    assertThat(deal(state, T0)).as("two acked: two to replace them, two more allowed").hasSize(4);

    assertThat(deal(state, T0.plusMillis(500)))
        .as("half a second later")
        .hasSize((int) PullStream.RAMP_PER_SECOND / 2);
    deal(state, T0.plusSeconds(10));
    assertThat(alone.outstanding).as("never past its window").hasSize(598);
  }

  @Test
  void a_stream_that_opens_later_catches_up_with_what_the_others_hold() {
    SubscriptionState state = state(Subscription.newBuilder());
    PullStream a = stream(state, 0, T0);
    PullStream b = stream(state, 0, T0);
    publish(state, 600);
    deal(state, T0.plusSeconds(1));
    assertThat(holdings(a, b)).containsExactly(210, 210);

    PullStream late = stream(state, 0, T0.plusSeconds(1));
    deal(state, T0.plusSeconds(1));
    assertThat(holdings(a, b, late))
        .as("at once, as much as the others")
        .containsExactly(210, 210, 180);
  }

  @Test
  void
      outstanding_messages_stay_where_they_are_and_what_comes_back_goes_to_the_stream_holding_the_fewest() {
    SubscriptionState state = state(Subscription.newBuilder());
    PullStream a = stream(state, 0, T0);
    publish(state, 6);
    List<ReceivedMessage> heldByA = deal(state, T0);
    PullStream b = stream(state, 0, T0);

    assertThat(deal(state, T0)).as("nothing is taken from a").isEmpty();
    state.modifyDeadline(heldByA.get(0).getAckId(), 0, T0);
    state.modifyDeadline(heldByA.get(1).getAckId(), 0, T0);
    deal(state, T0);

    assertThat(holdings(a, b)).containsExactly(4, 2);
    assertThat(b.outstanding.values())
        .extracting(m -> m.message.getData().toStringUtf8())
        .containsExactlyInAnyOrder("m0", "m1");
  }

  @Test
  void with_ordering_a_keys_run_stays_on_its_stream_while_the_other_keys_are_spread() {
    SubscriptionState state = state(Subscription.newBuilder().setEnableMessageOrdering(true));
    PullStream a = stream(state, 0, T0);
    PullStream b = stream(state, 0, T0);
    for (int i = 0; i < 4; i++) {
      publish(state, "k" + i, "k");
    }
    publish(state, "x0", "x");

    deal(state, T0);

    assertThat(a.outstanding.values())
        .extracting(m -> m.message.getData().toStringUtf8())
        .as("the whole run of k on the stream that took its first message")
        .containsExactlyInAnyOrder("k0", "k1", "k2", "k3");
    assertThat(b.outstanding.values())
        .extracting(m -> m.message.getData().toStringUtf8())
        .containsExactly("x0");
  }

  private static List<ReceivedMessage> deliverAll(SubscriptionState state, Instant now) {
    List<ReceivedMessage> delivered = new ArrayList<>();
    ReceivedMessage next;
    while ((next = deliver(state, now)) != null) {
      delivered.add(next);
    }
    return delivered;
  }

  private static String text(ReceivedMessage message) {
    return message.getMessage().getData().toStringUtf8();
  }

  @Test
  void seeking_to_a_time_acks_older_messages_and_brings_back_retained_newer_ones() {
    SubscriptionState state = state(Subscription.newBuilder().setRetainAckedMessages(true));
    QueuedMessage a = publish(state, "a", "");
    ReceivedMessage delivered = deliver(state, T0);
    state.ack(delivered.getAckId());
    assertThat(state.backlog()).isZero();

    state.seek(a.publishTime);
    assertThat(state.backlog()).isEqualTo(1);

    state.seek(a.publishTime.plusMillis(1));
    assertThat(state.backlog()).isZero();
    assertThat(deliver(state, T0)).isNull();
  }
}
