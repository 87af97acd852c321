package dev.pubsubworker.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.google.api.core.ApiService;
import com.google.api.gax.core.NoCredentialsProvider;
import com.google.api.gax.grpc.GrpcTransportChannel;
import com.google.api.gax.rpc.FixedTransportChannelProvider;
import com.google.api.gax.rpc.TransportChannelProvider;
import com.google.cloud.pubsub.v1.Subscriber;
import com.google.cloud.pubsub.v1.SubscriptionAdminClient;
import com.google.cloud.pubsub.v1.SubscriptionAdminSettings;
import com.google.cloud.pubsub.v1.TopicAdminClient;
import com.google.cloud.pubsub.v1.TopicAdminSettings;
import com.google.cloud.spring.autoconfigure.core.GcpContextAutoConfiguration;
import com.google.cloud.spring.autoconfigure.pubsub.GcpPubSubAutoConfiguration;
import com.google.cloud.spring.autoconfigure.pubsub.GcpPubSubEmulatorAutoConfiguration;
import com.google.cloud.spring.pubsub.core.PubSubTemplate;
import com.google.cloud.spring.pubsub.integration.AckMode;
import com.google.cloud.spring.pubsub.integration.inbound.PubSubInboundChannelAdapter;
import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.Subscription;
import com.google.pubsub.v1.SubscriptionName;
import com.google.pubsub.v1.TopicName;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.backend.memory.InMemoryLockBackend;
import dev.pubsubworker.backend.redis.RedisLockBackend;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.embedded.EmbeddedPubSub;
import dev.pubsubworker.pubsub.MessageKey;
import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.pubsub.micrometer.ReceiverMetricNames;
import dev.pubsubworker.pubsub.micrometer.ReceiverMetrics;
import dev.pubsubworker.testservices.TestServices;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.actuate.autoconfigure.metrics.MetricsAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.metrics.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.integration.IntegrationAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.annotation.ServiceActivator;
import org.springframework.integration.channel.DirectChannel;
import org.springframework.integration.support.MessageBuilder;
import org.springframework.messaging.MessageChannel;
import org.springframework.messaging.MessageHandlingException;

/**
 * The auto-configuration in a Spring context with the real Spring Cloud GCP, pointed at the
 * embedded Pub/Sub server as at an emulator: the beans it makes and leaves to the application, the
 * consumer's ack and nack, customizers, the health indicator's view of the store and the streams,
 * the checks that stop a start (ack extension, shutdown phase, dead-letter topic, an adapter in
 * AUTO mode), and the graceful stop's abandon.
 */
class PubSubWorkerAutoConfigurationTest {

  private static final String PROJECT = "spring-autoconfigure-test";
  private static final AtomicInteger NAMES = new AtomicInteger();

  private static EmbeddedPubSub pubsub;
  private static ManagedChannel channel;
  private static TopicAdminClient topics;
  private static SubscriptionAdminClient subscriptions;

  @BeforeAll
  static void server() throws Exception {
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
  }

  @AfterAll
  static void stopServer() throws Exception {
    topics.close();
    subscriptions.close();
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    pubsub.close();
  }

  private static ApplicationContextRunner runner() {
    return new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                GcpContextAutoConfiguration.class,
                GcpPubSubEmulatorAutoConfiguration.class,
                GcpPubSubAutoConfiguration.class,
                MetricsAutoConfiguration.class,
                SimpleMetricsExportAutoConfiguration.class,
                IntegrationAutoConfiguration.class,
                PubSubWorkerAutoConfiguration.class))
        .withPropertyValues(
            "spring.cloud.gcp.project-id=" + PROJECT,
            "spring.cloud.gcp.pubsub.emulator-host=" + pubsub.hostPort(),
            "pubsub-worker.lock-store.type=in-memory",
            "pubsub-worker.health.lock-store-probe-interval=100ms",
            "pubsub-worker.health.lock-store-stale-after=2s");
  }

  /** A new topic and its subscription; returns the subscription's short name. */
  private static String subscription(String prefix) {
    String name = prefix + "-" + NAMES.incrementAndGet();
    topics.createTopic(TopicName.of(PROJECT, name));
    subscriptions.createSubscription(
        Subscription.newBuilder()
            .setName(SubscriptionName.of(PROJECT, name + "-sub").toString())
            .setTopic(TopicName.of(PROJECT, name).toString())
            .setAckDeadlineSeconds(10)
            .build());
    return name;
  }

  private static void publish(String topic, String orderId, String data) {
    PubsubMessage.Builder m = PubsubMessage.newBuilder().setData(ByteString.copyFromUtf8(data));
    if (orderId != null) {
      m.putAttributes("order_id", orderId);
    }
    topics.publish(TopicName.of(PROJECT, topic), List.of(m.build()));
  }

  private static long settled(ConfigurableApplicationContext context, String id, Outcome o) {
    Counter c =
        context
            .getBean(MeterRegistry.class)
            .find(ReceiverMetricNames.MESSAGES_SETTLED)
            .tag(ReceiverMetricNames.SUBSCRIPTION, id)
            .tag(ReceiverMetricNames.OUTCOME, ReceiverMetricNames.tagValue(o))
            .counter();
    return c == null ? 0 : (long) c.count();
  }

  /** The innermost cause, or {@code t} itself. */
  private static Throwable root(Throwable t) {
    Throwable c = t;
    while (c.getCause() != null) {
      c = c.getCause();
    }
    return c;
  }

  private static Health health(ConfigurableApplicationContext context) {
    return context.getBean(PubSubWorkerHealthIndicator.class).health();
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> stream(Health health, String id) {
    return ((Map<String, Map<String, Object>>) health.getDetails().get("subscriptions")).get(id);
  }

  @Test
  void a_minimal_application_gets_the_store_the_subscriptions_metrics_and_health() {
    runner()
        .withPropertyValues("pubsub-worker.subscriptions.orders.key=attribute:order_id")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context.getBean(LockBackend.class))
                  .isInstanceOf(InMemoryLockBackend.class);
              assertThat(context).hasSingleBean(GuardedSubscriptions.class);
              assertThat(context).hasSingleBean(ReceiverMetrics.class);
              assertThat(context).hasSingleBean(PubSubWorkerHealthIndicator.class);
              assertThat(
                      context
                          .getBean(MeterRegistry.class)
                          .find(ReceiverMetricNames.MESSAGES_RECEIVED)
                          .tag(ReceiverMetricNames.SUBSCRIPTION, "orders")
                          .counter())
                  .as("a configured subscription's meters exist from the start, at zero")
                  .isNotNull();
              await()
                  .atMost(Duration.ofSeconds(5))
                  .untilAsserted(
                      () -> assertThat(health(context).getStatus()).isEqualTo(Status.UP));
            });
  }

  @Test
  void without_a_lock_store_type_the_start_fails_unless_the_application_has_a_backend() {
    new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(
                GcpContextAutoConfiguration.class,
                GcpPubSubEmulatorAutoConfiguration.class,
                GcpPubSubAutoConfiguration.class,
                PubSubWorkerAutoConfiguration.class))
        .withPropertyValues(
            "spring.cloud.gcp.project-id=" + PROJECT,
            "spring.cloud.gcp.pubsub.emulator-host=" + pubsub.hostPort())
        .run(
            context ->
                assertThat(context.getStartupFailure())
                    .rootCause()
                    .hasMessageContaining("pubsub-worker.lock-store.type"));
    InMemoryLockBackend own = new InMemoryLockBackend();
    runner()
        .withPropertyValues("pubsub-worker.lock-store.type=") // unset: the application's wins
        .withBean(LockBackend.class, () -> own)
        .run(context -> assertThat(context.getBean(LockBackend.class)).isSameAs(own));
  }

  @Configuration(proxyBeanMethods = false)
  static class OwnSubscribe {
    static final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    static final AtomicBoolean failFirst = new AtomicBoolean(true);

    @Bean
    Subscriber ordersSubscriber(
        PubSubTemplate template,
        GuardedSubscriptions guarded,
        org.springframework.core.env.Environment env) {
      MessageHandler handler =
          (message, context) -> {
            runs.computeIfAbsent(context.key().orElseThrow(), k -> new AtomicInteger())
                .incrementAndGet();
            if (failFirst.getAndSet(false)) {
              throw new IllegalStateException("the first attempt fails");
            }
          };
      return template.subscribe(
          env.getProperty("test.subscription"), guarded.consumer("orders", handler));
    }

    @Bean
    GuardedReceiverCustomizer templateKey() {
      return (id, builder) ->
          builder.key(
              MessageKey.of(
                      "template:o-{order_id}", m -> m.attribute("order_id").map(o -> "o-" + o))
                  .withNamespace(id));
    }
  }

  @Test
  void a_consumer_for_the_applications_own_subscribe_nacks_a_failure_and_acks_the_rest() {
    String name = subscription("own");
    OwnSubscribe.runs.clear();
    OwnSubscribe.failFirst.set(true);
    runner()
        .withUserConfiguration(OwnSubscribe.class)
        .withPropertyValues(
            "test.subscription=" + name + "-sub",
            "pubsub-worker.subscriptions.orders.subscription=" + name + "-sub")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              publish(name, "7", "order");
              await()
                  .atMost(Duration.ofSeconds(30))
                  .until(() -> settled(context, "orders", Outcome.PROCESSED) == 1);
              assertThat(settled(context, "orders", Outcome.FAILED))
                  .as("the first attempt threw: nacked, redelivered")
                  .isEqualTo(1);
              assertThat(OwnSubscribe.runs)
                  .as("the customizer's key, under the subscription's namespace")
                  .containsOnlyKeys("orders:o-7");
              publish(name, "7", "order again");
              await()
                  .atMost(Duration.ofSeconds(20))
                  .until(() -> settled(context, "orders", Outcome.DUPLICATE) == 1);
              assertThat(OwnSubscribe.runs.get("orders:o-7")).hasValue(2); // fail, then succeed
              assertThat(stream(health(context), "orders"))
                  .as("the application's own Subscriber is not visible to the starter")
                  .containsEntry("stream", "not visible");
            });
  }

  @Configuration(proxyBeanMethods = false)
  static class Subscribed {
    static final List<String> keys = new CopyOnWriteArrayList<>();

    @Bean
    GuardedSubscription orders(GuardedSubscriptions subscriptions) {
      return subscriptions.subscribe(
          "orders", (message, context) -> keys.add(context.key().orElseThrow()));
    }
  }

  @Test
  void health_is_down_while_a_subscriber_has_failed() {
    runner()
        .withUserConfiguration(Subscribed.class)
        .withPropertyValues("pubsub-worker.subscriptions.orders.subscription=no-such-subscription")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              await()
                  .atMost(Duration.ofSeconds(20))
                  .untilAsserted(
                      () -> {
                        Health h = health(context);
                        assertThat(h.getStatus()).isEqualTo(Status.DOWN);
                        assertThat(stream(h, "orders"))
                            .containsEntry("stream", "subscriber")
                            .containsEntry("state", ApiService.State.FAILED.name());
                        assertThat((String) stream(h, "orders").get("failure"))
                            .contains("NOT_FOUND");
                      });
            });
  }

  @Test
  void health_is_down_while_the_lock_store_does_not_answer() {
    runner()
        .withPropertyValues(
            "pubsub-worker.lock-store.type=redis",
            "pubsub-worker.lock-store.redis.uri=redis://127.0.0.1:1",
            "pubsub-worker.lock-store.redis.connect-timeout=200ms")
        .run(
            context -> {
              assertThat(context.getBean(LockBackend.class)).isInstanceOf(RedisLockBackend.class);
              await()
                  .atMost(Duration.ofSeconds(10))
                  .untilAsserted(
                      () -> {
                        Health h = health(context);
                        assertThat(h.getStatus()).isEqualTo(Status.DOWN);
                        @SuppressWarnings("unchecked")
                        Map<String, Object> store =
                            (Map<String, Object>) h.getDetails().get("lockStore");
                        assertThat((String) store.get("problem"))
                            .contains("has not answered yet")
                            .contains("probe failed");
                      });
            });
    runner()
        .withPropertyValues(
            "pubsub-worker.lock-store.type=redis",
            "pubsub-worker.lock-store.redis.uri=" + TestServices.redis().uri())
        .run(
            context ->
                await()
                    .atMost(Duration.ofSeconds(10))
                    .untilAsserted(
                        () -> assertThat(health(context).getStatus()).isEqualTo(Status.UP)));
  }

  @Test
  void a_wait_longer_than_the_subscribers_ack_extension_stops_the_start() {
    runner()
        .withUserConfiguration(Subscribed.class)
        .withPropertyValues(
            "spring.cloud.gcp.pubsub.subscriber.max-ack-extension-period=60",
            "pubsub-worker.subscriptions.orders.in-progress-max-wait=2m")
        .run(
            context ->
                assertThat(context.getStartupFailure())
                    .rootCause()
                    .hasMessageContaining("pubsub-worker.subscriptions.orders.in-progress-max-wait")
                    .hasMessageContaining("max-ack-extension-period (60s"));
  }

  @Test
  void a_stop_that_cannot_fit_in_the_shutdown_phase_stops_the_start() {
    runner()
        .withPropertyValues("pubsub-worker.shutdown-grace=25s")
        .run(
            context ->
                assertThat(context.getStartupFailure())
                    .rootCause()
                    .hasMessageContaining("pubsub-worker.shutdown-grace (PT25S)")
                    .hasMessageContaining("spring.lifecycle.timeout-per-shutdown-phase"));
    runner()
        .withPropertyValues(
            "pubsub-worker.shutdown-grace=25s", "spring.lifecycle.timeout-per-shutdown-phase=40s")
        .run(context -> assertThat(context).hasNotFailed());
  }

  @Test
  void a_dead_letter_topic_that_does_not_exist_stops_the_start() {
    String name = subscription("dead");
    runner()
        .withUserConfiguration(Subscribed.class)
        .withPropertyValues(
            "pubsub-worker.subscriptions.orders.subscription=" + name + "-sub",
            "pubsub-worker.subscriptions.orders.dead-letter-topic=no-such-topic")
        .run(
            context ->
                assertThat(context.getStartupFailure())
                    .rootCause()
                    .hasMessageContaining(
                        "the dead-letter topic projects/" + PROJECT + "/topics/no-such-topic")
                    .hasMessageContaining("pubsub-worker.subscriptions.orders.dead-letter-topic"));
  }

  @Test
  void an_id_that_is_not_configured_is_refused_naming_the_configured_ones() {
    runner()
        .withPropertyValues("pubsub-worker.subscriptions.orders.key=message-id")
        .run(
            context -> {
              GuardedSubscriptions guarded = context.getBean(GuardedSubscriptions.class);
              assertThatThrownBy(() -> guarded.consumer("order", (m, c) -> {}))
                  .isInstanceOf(IllegalArgumentException.class)
                  .hasMessage(
                      "pubsub-worker.subscriptions.order is not configured (configured: [orders])");
              guarded.consumer("orders", (m, c) -> {});
              assertThatThrownBy(() -> guarded.consumer("orders", (m, c) -> {}))
                  .isInstanceOf(IllegalStateException.class)
                  .hasMessageContaining("has a receiver already");
            });
  }

  @Configuration(proxyBeanMethods = false)
  static class Adapter {
    static final List<String> refunds = new CopyOnWriteArrayList<>();

    @Bean
    MessageChannel refundRequests() {
      return new DirectChannel();
    }

    @Bean
    PubSubInboundChannelAdapter refundsAdapter(
        PubSubTemplate template,
        @Qualifier("refundRequests") MessageChannel channel,
        org.springframework.core.env.Environment env) {
      PubSubInboundChannelAdapter adapter =
          new PubSubInboundChannelAdapter(template, env.getProperty("test.subscription"));
      adapter.setOutputChannel(channel);
      adapter.setAckMode(AckMode.valueOf(env.getProperty("test.ack-mode")));
      return adapter;
    }

    @Bean
    @ServiceActivator(inputChannel = "refundRequests")
    GuardedPubSubMessageHandler refunds(GuardedSubscriptions subscriptions) {
      return GuardedPubSubMessageHandler.of(
          subscriptions.consumer("refunds", (m, c) -> refunds.add(c.key().orElseThrow())));
    }
  }

  @Test
  void an_inbound_channel_adapter_must_be_in_manual_mode_and_health_watches_it() {
    String name = subscription("adapter");
    for (String mode : List.of("AUTO", "AUTO_ACK")) {
      runner()
          .withUserConfiguration(Adapter.class)
          .withPropertyValues(
              "test.subscription=" + name + "-sub",
              "test.ack-mode=" + mode,
              "pubsub-worker.subscriptions.refunds.key=attribute:order_id")
          .run(
              context ->
                  assertThat(root(context.getStartupFailure()))
                      .hasMessageContaining("PubSubInboundChannelAdapter 'refundsAdapter'")
                      .hasMessageContaining("AckMode." + mode)
                      .hasMessageContaining("set adapter.setAckMode(AckMode.MANUAL)"));
    }
    Adapter.refunds.clear();
    runner()
        .withUserConfiguration(Adapter.class)
        .withPropertyValues(
            "test.subscription=" + name + "-sub",
            "test.ack-mode=MANUAL",
            "pubsub-worker.subscriptions.refunds.key=attribute:order_id")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              publish(name, "r-1", "refund");
              publish(name, "r-1", "refund again");
              // The second may arrive while the first runs: it then waits parked, and is a
              // duplicate once the first is DONE.
              await()
                  .atMost(Duration.ofSeconds(20))
                  .until(
                      () ->
                          settled(context, "refunds", Outcome.DUPLICATE)
                                  + settled(context, "refunds", Outcome.PARKED_THEN_DUPLICATE)
                              == 1);
              assertThat(Adapter.refunds).containsExactly("refunds:r-1");
              assertThat(stream(health(context), "refunds"))
                  .containsEntry("stream", "channel adapter refundsAdapter")
                  .containsEntry("state", "RUNNING");
              GuardedPubSubMessageHandler handler =
                  context.getBean(GuardedPubSubMessageHandler.class);
              assertThatThrownBy(
                      () -> handler.handleMessage(MessageBuilder.withPayload("x").build()))
                  .isInstanceOf(MessageHandlingException.class)
                  .hasMessageContaining("has no gcp_pubsub_original_message header");
            });
  }

  @Configuration(proxyBeanMethods = false)
  static class Blocking {
    static final CountDownLatch started = new CountDownLatch(1);
    static final AtomicBoolean interrupted = new AtomicBoolean();

    @Bean
    GuardedSubscription orders(GuardedSubscriptions subscriptions) {
      return subscriptions.subscribe(
          "orders",
          (message, context) -> {
            started.countDown();
            try {
              Thread.sleep(Duration.ofMinutes(5).toMillis());
            } catch (InterruptedException e) {
              interrupted.set(true);
              throw e;
            }
          });
    }
  }

  @Test
  void the_stop_abandons_a_handler_past_the_grace_releasing_its_claim() throws Exception {
    String name = subscription("stop");
    InMemoryLockBackend store = new InMemoryLockBackend();
    GuardedSubscription[] orders = new GuardedSubscription[1];
    runner()
        .withUserConfiguration(Blocking.class)
        .withBean(LockBackend.class, () -> store)
        .withPropertyValues(
            "pubsub-worker.subscriptions.orders.subscription=" + name + "-sub",
            "pubsub-worker.subscriptions.orders.key=attribute:order_id",
            "pubsub-worker.shutdown-grace=1s")
        .run(
            context -> {
              orders[0] =
                  context.getBean(GuardedSubscriptions.class).subscription("orders").orElseThrow();
              publish(name, "po-9", "order");
              assertThat(Blocking.started.await(20, TimeUnit.SECONDS)).isTrue();
              assertThat(
                      store.claim(ClaimRequest.of("orders:po-9", Duration.ofSeconds(30), "other")))
                  .as("the running handler holds the key")
                  .isInstanceOf(ClaimResult.HeldByOther.class);
            });
    // run() closed the context: the grace ran out, the handler was abandoned.
    assertThat(Blocking.interrupted).as("the handler was interrupted").isTrue();
    assertThat(store.claim(ClaimRequest.of("orders:po-9", Duration.ofSeconds(30), "next")))
        .as("its claim was released: reclaimable at once")
        .isInstanceOf(ClaimResult.Won.class);
    assertThat(orders[0].subscriber().orElseThrow().state()).isEqualTo(ApiService.State.TERMINATED);
  }
}
