package dev.pubsubworker.examples.spring.orders;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.api.core.ApiService;
import com.google.api.gax.core.NoCredentialsProvider;
import com.google.api.gax.grpc.GrpcTransportChannel;
import com.google.api.gax.rpc.FixedTransportChannelProvider;
import com.google.api.gax.rpc.TransportChannelProvider;
import com.google.cloud.pubsub.v1.SubscriptionAdminClient;
import com.google.cloud.pubsub.v1.SubscriptionAdminSettings;
import com.google.cloud.pubsub.v1.TopicAdminClient;
import com.google.cloud.pubsub.v1.TopicAdminSettings;
import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.PullRequest;
import com.google.pubsub.v1.ReceivedMessage;
import com.google.pubsub.v1.Subscription;
import com.google.pubsub.v1.SubscriptionName;
import com.google.pubsub.v1.TopicName;
import dev.pubsubworker.api.PoisonMessageException;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.embedded.EmbeddedPubSub;
import dev.pubsubworker.pubsub.DeadLetterAttributes;
import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.pubsub.micrometer.ReceiverMetricNames;
import dev.pubsubworker.spring.boot.GuardedSubscription;
import dev.pubsubworker.spring.boot.GuardedSubscriptions;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthEndpoint;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The sample application end to end, as it is configured ({@code application.yaml}), on the real
 * Spring Cloud GCP pointed at the embedded Pub/Sub server as at an emulator: for orders (through
 * {@code PubSubTemplate.subscribe}) and refunds (through the inbound channel adapter), a Pub/Sub
 * redelivery and a producer's republish are acked without running the handler again, a key held by
 * a crashed holder is parked and then processed, a poison message and one without a key are
 * dead-lettered with their diagnostics (the unkeyed one never runs), and every side effect happens
 * exactly once. The health indicator and the metrics are read from the running application.
 */
class OrdersApplicationEndToEndTest {

  private static final String PROJECT = "spring-orders-e2e";

  private static EmbeddedPubSub pubsub;
  private static ManagedChannel channel;
  private static TopicAdminClient topics;
  private static SubscriptionAdminClient subscriptions;
  private static ConfigurableApplicationContext app;

  @BeforeAll
  static void start() throws Exception {
    pubsub = EmbeddedPubSub.start();
    channel = ManagedChannelBuilder.forTarget(pubsub.hostPort()).usePlaintext().build();
    TransportChannelProvider channels =
        FixedTransportChannelProvider.create(GrpcTransportChannel.create(channel));
    topics =
        TopicAdminClient.create(
            TopicAdminSettings.newBuilder()
                .setTransportChannelProvider(channels)
                .setCredentialsProvider(NoCredentialsProvider.create())
                .build());
    subscriptions =
        SubscriptionAdminClient.create(
            SubscriptionAdminSettings.newBuilder()
                .setTransportChannelProvider(channels)
                .setCredentialsProvider(NoCredentialsProvider.create())
                .build());
    for (String topic : List.of("orders", "orders-dead", "refunds", "refunds-dead")) {
      topics.createTopic(TopicName.of(PROJECT, topic));
      subscriptions.createSubscription(
          Subscription.newBuilder()
              .setName(SubscriptionName.of(PROJECT, topic + "-sub").toString())
              .setTopic(TopicName.of(PROJECT, topic).toString())
              .setAckDeadlineSeconds(10)
              .build());
    }
    app =
        new SpringApplicationBuilder(OrdersApplication.class)
            .properties(
                "spring.cloud.gcp.project-id=" + PROJECT,
                "spring.cloud.gcp.pubsub.emulator-host=" + pubsub.hostPort(),
                "spring.datasource.url=jdbc:h2:mem:spring-orders-e2e;DB_CLOSE_DELAY=-1",
                "pubsub-worker.worker-id=e2e-worker",
                "pubsub-worker.health.lock-store-probe-interval=200ms",
                "pubsub-worker.health.lock-store-stale-after=10s")
            .run();
  }

  @AfterAll
  static void stop() throws Exception {
    if (app != null) {
      GuardedSubscription orders =
          app.getBean(GuardedSubscriptions.class).subscription("orders").orElseThrow();
      app.close();
      assertThat(orders.subscriber().orElseThrow().state())
          .as("the context's close stopped the subscriber it opened")
          .isEqualTo(ApiService.State.TERMINATED);
    }
    if (topics != null) {
      topics.close();
      subscriptions.close();
    }
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (pubsub != null) {
      pubsub.close();
    }
  }

  @Test
  void orders_through_PubSubTemplate_subscribe_run_exactly_once() {
    awaitHealthy();
    holdKey("orders:po-2"); // a crashed holder's claim, which lapses in 2 s
    // Pub/Sub delivers po-1's message twice (a redelivery: same message id).
    pubsub.faults().duplicateDeliveries(SubscriptionName.of(PROJECT, "orders-sub").toString(), 1);

    publish("orders", "order_id", "po-1", "A-1 x2");
    await().atMost(Duration.ofSeconds(20)).until(() -> settled("orders") >= 2);
    publish("orders", "order_id", "po-1", "A-1 x2"); // the producer published it again
    publish("orders", "order_id", "po-2", "B-7 x1"); // its key is held
    String poison = publish("orders", "order_id", "po-3", "three of them, please");
    String unkeyed = publish("orders", null, null, "C-1 x1");

    await().atMost(Duration.ofSeconds(30)).until(() -> settled("orders") == 6);
    assertThat(count("orders", Outcome.PROCESSED)).isEqualTo(1);
    assertThat(count("orders", Outcome.DUPLICATE) + count("orders", Outcome.PARKED_THEN_DUPLICATE))
        .as("the redelivery and the republish")
        .isEqualTo(2);
    assertThat(count("orders", Outcome.PARKED_THEN_PROCESSED)).as("po-2, held").isEqualTo(1);
    assertThat(count("orders", Outcome.DEAD_LETTERED)).as("poison and unkeyed").isEqualTo(2);
    assertThat(rows("SELECT order_id FROM placed_orders ORDER BY order_id"))
        .as("each order placed exactly once; the poison and the unkeyed ones never")
        .containsExactly("po-1", "po-2");

    Map<String, Map<String, String>> letters = deadLetters("orders-dead-sub", 2);
    assertThat(letters).containsOnlyKeys(poison, unkeyed);
    assertThat(letters.get(poison))
        .containsEntry(DeadLetterAttributes.ERROR_CLASS, PoisonMessageException.class.getName())
        .containsEntry(
            DeadLetterAttributes.SUBSCRIPTION,
            SubscriptionName.of(PROJECT, "orders-sub").toString())
        .containsEntry(DeadLetterAttributes.WORKER_ID, "e2e-worker")
        .containsEntry("order_id", "po-3");
    assertThat(letters.get(unkeyed))
        .containsEntry(DeadLetterAttributes.ERROR_CLASS, "no-key")
        .containsEntry(
            DeadLetterAttributes.ERROR_MESSAGE, "no key: attribute:order_id did not resolve");
    awaitHealthy();
  }

  @Test
  void refunds_through_the_inbound_channel_adapter_run_exactly_once() {
    awaitHealthy();
    holdKey("refunds:r-2");
    pubsub.faults().duplicateDeliveries(SubscriptionName.of(PROJECT, "refunds-sub").toString(), 1);

    publish("refunds", "refund_id", "r-1", "1250 cents");
    await().atMost(Duration.ofSeconds(20)).until(() -> settled("refunds") >= 2);
    publish("refunds", "refund_id", "r-1", "1250 cents");
    publish("refunds", "refund_id", "r-2", "99 cents");
    String poison = publish("refunds", "refund_id", "r-3", "a lot");
    String unkeyed = publish("refunds", null, null, "5 cents");

    await().atMost(Duration.ofSeconds(30)).until(() -> settled("refunds") == 6);
    assertThat(count("refunds", Outcome.PROCESSED)).isEqualTo(1);
    assertThat(
            count("refunds", Outcome.DUPLICATE) + count("refunds", Outcome.PARKED_THEN_DUPLICATE))
        .isEqualTo(2);
    assertThat(count("refunds", Outcome.PARKED_THEN_PROCESSED))
        .as("r-2: parked, which the adapter in MANUAL mode leaves to the engine")
        .isEqualTo(1);
    assertThat(count("refunds", Outcome.DEAD_LETTERED)).isEqualTo(2);
    assertThat(rows("SELECT refund_id FROM refunds ORDER BY refund_id"))
        .containsExactly("r-1", "r-2");

    Map<String, Map<String, String>> letters = deadLetters("refunds-dead-sub", 2);
    assertThat(letters).containsOnlyKeys(poison, unkeyed);
    assertThat(letters.get(poison))
        .containsEntry(DeadLetterAttributes.ERROR_CLASS, PoisonMessageException.class.getName())
        .containsEntry(
            DeadLetterAttributes.SUBSCRIPTION,
            SubscriptionName.of(PROJECT, "refunds-sub").toString());
    assertThat(letters.get(unkeyed)).containsEntry(DeadLetterAttributes.ERROR_CLASS, "no-key");

    Health health = pubSubWorkerHealth();
    @SuppressWarnings("unchecked")
    Map<String, Map<String, Object>> streams =
        (Map<String, Map<String, Object>>) health.getDetails().get("subscriptions");
    assertThat(streams.get("refunds"))
        .containsEntry("stream", "channel adapter refundsAdapter")
        .containsEntry("state", "RUNNING");
    assertThat(streams.get("orders"))
        .containsEntry("stream", "subscriber")
        .containsEntry("state", "RUNNING");
  }

  private static void awaitHealthy() {
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(() -> assertThat(pubSubWorkerHealth().getStatus()).isEqualTo(Status.UP));
  }

  private static Health pubSubWorkerHealth() {
    return (Health) app.getBean(HealthEndpoint.class).healthForPath("pubSubWorker");
  }

  private static void holdKey(String key) {
    ClaimResult held =
        app.getBean(LockBackend.class)
            .claim(ClaimRequest.of(key, Duration.ofSeconds(2), "crashed-holder"));
    assertThat(held).isInstanceOf(ClaimResult.Won.class);
  }

  /** Publishes one message, with attribute {@code name = value} unless {@code name} is null. */
  private static String publish(String topic, String name, String value, String data) {
    PubsubMessage.Builder m = PubsubMessage.newBuilder().setData(ByteString.copyFromUtf8(data));
    if (name != null) {
      m.putAttributes(name, value);
    }
    return topics.publish(TopicName.of(PROJECT, topic), List.of(m.build())).getMessageIds(0);
  }

  private static double settled(String subscription) {
    return app
        .getBean(MeterRegistry.class)
        .find(ReceiverMetricNames.MESSAGES_SETTLED)
        .tag(ReceiverMetricNames.SUBSCRIPTION, subscription)
        .counters()
        .stream()
        .mapToDouble(Counter::count)
        .sum();
  }

  private static long count(String subscription, Outcome outcome) {
    Counter c =
        app.getBean(MeterRegistry.class)
            .find(ReceiverMetricNames.MESSAGES_SETTLED)
            .tag(ReceiverMetricNames.SUBSCRIPTION, subscription)
            .tag(ReceiverMetricNames.OUTCOME, ReceiverMetricNames.tagValue(outcome))
            .counter();
    return c == null ? 0 : (long) c.count();
  }

  private static List<String> rows(String sql) {
    return app.getBean(JdbcTemplate.class).queryForList(sql, String.class);
  }

  /** Pulls {@code count} dead letters within 20 s, by the original's message id. */
  private static Map<String, Map<String, String>> deadLetters(String subscription, int count) {
    List<ReceivedMessage> received = new ArrayList<>();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> {
              received.addAll(
                  subscriptions
                      .pull(
                          PullRequest.newBuilder()
                              .setSubscription(
                                  SubscriptionName.of(PROJECT, subscription).toString())
                              .setMaxMessages(count - received.size())
                              .build())
                      .getReceivedMessagesList());
              return received.size() >= count;
            });
    Map<String, Map<String, String>> byOriginal = new HashMap<>();
    for (ReceivedMessage m : received) {
      Map<String, String> a = m.getMessage().getAttributesMap();
      byOriginal.put(a.get(DeadLetterAttributes.MESSAGE_ID), a);
    }
    return byOriginal;
  }
}
