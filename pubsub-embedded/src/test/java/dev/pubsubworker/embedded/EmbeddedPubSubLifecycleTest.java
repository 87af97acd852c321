package dev.pubsubworker.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.api.gax.rpc.BidiStream;
import com.google.api.gax.rpc.UnavailableException;
import com.google.cloud.pubsub.v1.Subscriber;
import com.google.pubsub.v1.StreamingPullRequest;
import com.google.pubsub.v1.StreamingPullResponse;
import com.google.pubsub.v1.Subscription;
import com.google.pubsub.v1.SubscriptionName;
import com.google.pubsub.v1.TopicName;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Starting, serving several subscribers at once, and stopping. */
class EmbeddedPubSubLifecycleTest {

  @Test
  void the_builder_refuses_nonsense_with_the_value_it_was_given() {
    assertThatThrownBy(() -> EmbeddedPubSub.newBuilder().setPort(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("port must be within 0..65535, but was -1");
    assertThatThrownBy(() -> EmbeddedPubSub.newBuilder().setHost(" "))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("host must not be blank");
    assertThatThrownBy(() -> EmbeddedPubSub.newBuilder().setTickInterval(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("tick interval must be > 0, but was PT0S");
  }

  @Test
  void a_taken_port_is_reported_with_the_address() {
    try (EmbeddedPubSub first = EmbeddedPubSub.start()) {
      assertThat(first.hostPort()).isEqualTo("127.0.0.1:" + first.port());
      assertThatThrownBy(() -> EmbeddedPubSub.newBuilder().setPort(first.port()).start())
          .isInstanceOf(UncheckedIOException.class)
          .hasMessageStartingWith("embedded Pub/Sub could not listen on 127.0.0.1:" + first.port());
    }
  }

  @Test
  void it_answers_the_emulators_http_readiness_probe_on_the_grpc_port() throws Exception {
    try (EmbeddedPubSub server = EmbeddedPubSub.start()) {
      HttpURLConnection probe =
          (HttpURLConnection)
              URI.create("http://" + server.hostPort() + "/").toURL().openConnection();
      try (InputStream body = probe.getInputStream()) {
        assertThat(probe.getResponseCode()).isEqualTo(200);
        assertThat(new String(body.readAllBytes(), StandardCharsets.US_ASCII)).isEqualTo("Ok\n");
      } finally {
        probe.disconnect();
      }
      PubSubTarget target = new PubSubTarget(server.hostPort(), "probe");
      try {
        assertThat(target.createTopic("after-probe").getTopic()).startsWith("after-probe-");
      } finally {
        target.close();
      }
    }
  }

  @Test
  void closing_ends_open_streams_with_unavailable_and_is_idempotent() {
    EmbeddedPubSub server = EmbeddedPubSub.start();
    PubSubTarget target = new PubSubTarget(server.hostPort(), "lifecycle");
    try {
      TopicName topic = target.createTopic("closing");
      SubscriptionName subscription = target.createSubscription(topic, Subscription.newBuilder());
      BidiStream<StreamingPullRequest, StreamingPullResponse> stream =
          target.subscriptions.streamingPullCallable().call();
      stream.send(
          StreamingPullRequest.newBuilder()
              .setSubscription(subscription.toString())
              .setStreamAckDeadlineSeconds(10)
              .build());
      target.publish(topic, "x");
      Iterator<StreamingPullResponse> responses = stream.iterator();
      assertThat(responses.next().getReceivedMessagesCount()).isEqualTo(1);

      server.close();
      server.close();

      assertThatThrownBy(responses::hasNext).isInstanceOf(UnavailableException.class);
    } finally {
      target.close();
      server.close();
    }
  }

  @Test
  void three_subscribers_on_one_subscription_nacking_some_first_deliveries_lose_nothing()
      throws Exception {
    try (EmbeddedPubSub server = EmbeddedPubSub.start()) {
      PubSubTarget target = new PubSubTarget(server.hostPort(), "many");
      try {
        TopicName topic = target.createTopic("shared");
        SubscriptionName subscription = target.createSubscription(topic, Subscription.newBuilder());
        int count = 1_500;
        List<String> texts = new ArrayList<>();
        for (int i = 0; i < count; i++) {
          texts.add(Integer.toString(i));
        }
        for (int from = 0; from < count; from += 500) {
          target.publish(topic, texts.subList(from, from + 500).toArray(String[]::new));
        }
        Map<String, AtomicInteger> deliveries = new ConcurrentHashMap<>();
        Set<String> acked = ConcurrentHashMap.newKeySet();
        List<Subscriber> subscribers = new ArrayList<>();
        for (int s = 0; s < 3; s++) {
          Subscriber subscriber =
              target
                  .subscriber(
                      subscription,
                      (message, consumer) -> {
                        String text = message.getData().toStringUtf8();
                        int delivery =
                            deliveries
                                .computeIfAbsent(text, k -> new AtomicInteger())
                                .incrementAndGet();
                        // Every fifth message is nacked on its first delivery.
                        if (delivery == 1 && Integer.parseInt(text) % 5 == 0) {
                          consumer.nack();
                        } else {
                          acked.add(text);
                          consumer.ack();
                        }
                      })
                  .build();
          subscriber.startAsync().awaitRunning();
          subscribers.add(subscriber);
        }
        try {
          await().atMost(Duration.ofSeconds(60)).until(() -> acked.size() == count);
        } finally {
          for (Subscriber subscriber : subscribers) {
            subscriber.stopAsync().awaitTerminated(30, TimeUnit.SECONDS);
          }
        }
        assertThat(acked).containsExactlyInAnyOrderElementsOf(texts);
        assertThat(deliveries.get("5").get()).isGreaterThanOrEqualTo(2);
        assertThat(target.pullOnce(subscription)).isEmpty();
      } finally {
        target.close();
      }
    }
  }
}
