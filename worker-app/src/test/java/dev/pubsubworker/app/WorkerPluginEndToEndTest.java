package dev.pubsubworker.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.cloud.pubsub.v1.Publisher;
import com.google.cloud.pubsub.v1.SubscriptionAdminClient;
import com.google.cloud.pubsub.v1.TopicAdminClient;
import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.Subscription;
import com.google.pubsub.v1.TopicName;
import com.typesafe.config.ConfigFactory;
import dev.pubsubworker.embedded.EmbeddedPubSub;
import dev.pubsubworker.embedded.EmbeddedPubSubTest;
import dev.pubsubworker.plugins.orders.OrderLedger;
import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.plugin.PluginLoader;
import dev.pubsubworker.runtime.pubsub.DispatchListener;
import dev.pubsubworker.runtime.pubsub.PubSubConnection;
import dev.pubsubworker.runtime.worker.Worker;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * What {@code worker-runtime/README.md} ("Testing a plugin end to end") shows a plugin author, with
 * the example orders plugin (this module's dependency; the runtime's tests load no example): the
 * plugin as {@code run} loads it, the real runtime and a real Subscriber, on the embedded Pub/Sub
 * server that {@link EmbeddedPubSubTest} starts for the class — nothing installed. Keep the two in
 * step.
 */
@EmbeddedPubSubTest
class WorkerPluginEndToEndTest {

  @Test
  void the_orders_plugin_places_each_order_once(EmbeddedPubSub pubsub) throws Exception {
    try (PubSubConnection connection = PubSubConnection.create(Optional.of(pubsub.hostPort()))) {
      TopicName topic = TopicName.of("test-project", "orders");
      try (TopicAdminClient topics = TopicAdminClient.create(connection.topicAdminSettings());
          SubscriptionAdminClient subscriptions =
              SubscriptionAdminClient.create(connection.subscriptionAdminSettings())) {
        topics.createTopic(topic);
        subscriptions.createSubscription(
            Subscription.newBuilder()
                .setName("projects/test-project/subscriptions/orders-sub")
                .setTopic(topic.toString())
                .build());
      }
      WorkerConfig config =
          WorkerConfig.load(
              ConfigFactory.parseString(
                      """
                      pubsub-worker {
                        project-id = test-project
                        pubsub-emulator-host = "%s"
                        lock-store.type = in-memory
                        subscriptions.orders {
                          name = orders-sub
                          handler = orders
                          key = "template:orders:{order_id}"
                        }
                      }
                      """
                          .formatted(pubsub.hostPort()))
                  .withFallback(ConfigFactory.defaultReference())
                  .resolve());
      OutcomeRecorder outcomes = new OutcomeRecorder();
      Worker worker =
          Worker.newBuilder(config)
              .plugins(PluginLoader.load(config, getClass().getClassLoader()))
              .dispatchListeners(List.of(outcomes))
              .build();
      worker.start();
      try {
        Publisher publisher = connection.publisher(topic).build();
        for (String id : List.of("po-1", "po-2", "po-1")) {
          publisher
              .publish(
                  PubsubMessage.newBuilder()
                      .setData(
                          ByteString.copyFromUtf8(
                              "{\"orderId\":\"" + id + "\",\"sku\":\"A-1\",\"quantity\":1}"))
                      .putAttributes("order_id", id)
                      .build())
              .get(10, TimeUnit.SECONDS);
        }
        publisher.shutdown();

        await()
            .atMost(Duration.ofSeconds(30))
            .until(
                () ->
                    // The second po-1 may arrive while the first runs: it then waits for it.
                    outcomes.count(Outcome.PROCESSED)
                                + outcomes.count(Outcome.PARKED_THEN_PROCESSED)
                            == 2
                        && outcomes.count(Outcome.DUPLICATE)
                                + outcomes.count(Outcome.PARKED_THEN_DUPLICATE)
                            == 1);
        OrderLedger ledger = worker.injector().getInstance(OrderLedger.class);
        assertThat(ledger.placements("po-1")).isEqualTo(1);
        assertThat(ledger.placements("po-2")).isEqualTo(1);
      } finally {
        worker.stop();
      }
    }
  }

  /** Records every settled outcome. */
  private static final class OutcomeRecorder implements DispatchListener {
    private final List<Outcome> outcomes = new CopyOnWriteArrayList<>();

    @Override
    public void settled(String subscription, Outcome outcome, Duration handlerTime) {
      outcomes.add(outcome);
    }

    long count(Outcome o) {
      return outcomes.stream().filter(x -> x == o).count();
    }
  }
}
