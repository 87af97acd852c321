package dev.pubsubworker.spring.boot;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

/**
 * The {@code pubsub-worker.*} settings bind from Boot's relaxed names and validate themselves: a
 * bad setting stops the start, every problem reported at once, each with its property's name.
 */
class PubSubWorkerPropertiesTest {

  @Configuration(proxyBeanMethods = false)
  @EnableConfigurationProperties(PubSubWorkerProperties.class)
  static class Bound {}

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner().withUserConfiguration(Bound.class);

  @Test
  void every_setting_binds_with_its_default_where_none_is_given() {
    runner
        .withPropertyValues(
            "pubsub-worker.lock-store.type=in-memory",
            "pubsub-worker.subscriptions.orders.subscription=orders-sub",
            "pubsub-worker.subscriptions.orders.key=attribute:order_id",
            "pubsub-worker.subscriptions.orders.guard=mutex",
            "pubsub-worker.subscriptions.orders.lease=45s",
            "pubsub-worker.subscriptions.orders.poison-exceptions=java.lang.NumberFormatException",
            "pubsub-worker.subscriptions.refunds.dead-letter-topic=refunds-dead")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              PubSubWorkerProperties p = context.getBean(PubSubWorkerProperties.class);
              assertThat(p.getLockStore().getType())
                  .isEqualTo(PubSubWorkerProperties.LockStoreType.IN_MEMORY);
              PubSubWorkerProperties.Subscription orders = p.getSubscriptions().get("orders");
              assertThat(orders.subscriptionName("orders")).isEqualTo("orders-sub");
              assertThat(orders.getGuard()).isEqualTo(dev.pubsubworker.pubsub.GuardMode.MUTEX);
              assertThat(orders.getLease()).isEqualTo(Duration.ofSeconds(45));
              assertThat(orders.getTtl()).isEqualTo(Duration.ofHours(24));
              assertThat(orders.keyNamespace("orders")).isEqualTo("orders");
              PubSubWorkerProperties.Subscription refunds = p.getSubscriptions().get("refunds");
              assertThat(refunds.subscriptionName("refunds")).isEqualTo("refunds");
              assertThat(refunds.getKey()).isEqualTo("message-id");
              assertThat(refunds.getInProgressMaxWait()).isEqualTo(Duration.ofMinutes(2));
              assertThat(p.getShutdownGrace()).isEqualTo(Duration.ofSeconds(20));
            });
  }

  @Test
  void every_bad_setting_is_reported_with_its_property() {
    runner
        .withPropertyValues(
            "pubsub-worker.subscriptions.orders.key=attr:order_id",
            "pubsub-worker.subscriptions.orders.key-namespace=a:b",
            "pubsub-worker.subscriptions.orders.lease=5",
            "pubsub-worker.subscriptions.orders.poison-exceptions=com.example.NoSuchException,java.lang.String",
            "pubsub-worker.subscriptions.refunds.in-progress-max-wait=-1s",
            "pubsub-worker.health.lock-store-stale-after=5s",
            "pubsub-worker.shutdown-grace=0s")
        .run(
            context -> {
              assertThat(context).hasFailed();
              // Boot reports each as "Property: pubsub-worker.<field>" with its reason.
              String message = rootMessage(context.getStartupFailure());
              assertThat(message)
                  .contains("field 'subscriptions[orders].key'")
                  .contains("must be message-id or attribute:NAME")
                  .contains("but was 'attr:order_id'")
                  .contains("field 'subscriptions[orders].keyNamespace'")
                  .contains("field 'subscriptions[orders].lease'")
                  .contains("a number without a unit is milliseconds")
                  .contains("field 'subscriptions[orders].poisonExceptions[0]'")
                  .contains("no class com.example.NoSuchException")
                  .contains("field 'subscriptions[orders].poisonExceptions[1]'")
                  .contains("java.lang.String is not an exception class")
                  .contains("field 'subscriptions[refunds].inProgressMaxWait'")
                  .contains("field 'health.lockStoreStaleAfter'")
                  .contains("field 'shutdownGrace'");
            });
  }

  private static String rootMessage(Throwable t) {
    StringBuilder all = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      all.append(c.getMessage()).append('\n');
      if (c
          instanceof
          org.springframework.boot.context.properties.bind.validation.BindValidationException b) {
        b.getValidationErrors().forEach(e -> all.append(e).append('\n'));
      }
    }
    return all.toString();
  }
}
