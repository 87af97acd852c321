package dev.pubsubworker.examples.spring.orders;

import com.google.cloud.spring.pubsub.core.PubSubTemplate;
import com.google.cloud.spring.pubsub.integration.AckMode;
import com.google.cloud.spring.pubsub.integration.inbound.PubSubInboundChannelAdapter;
import dev.pubsubworker.spring.boot.GuardedPubSubMessageHandler;
import dev.pubsubworker.spring.boot.GuardedSubscription;
import dev.pubsubworker.spring.boot.GuardedSubscriptions;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.integration.annotation.ServiceActivator;
import org.springframework.integration.channel.DirectChannel;
import org.springframework.messaging.MessageChannel;

/**
 * An orders service on Spring Boot and Spring Cloud GCP that places every order exactly once and
 * records every refund exactly once, with the lock records in its own database (see {@code
 * application.yaml}). Orders come through {@code PubSubTemplate.subscribe}, refunds through Spring
 * Integration's inbound channel adapter: the two ways Spring Cloud GCP delivers messages.
 */
@SpringBootApplication
public class OrdersApplication {

  public static void main(String[] args) {
    SpringApplication.run(OrdersApplication.class, args);
  }

  // readme:orders:start
  /** Orders: subscribed through PubSubTemplate.subscribe, stopped gracefully at shutdown. */
  @Bean
  GuardedSubscription orders(GuardedSubscriptions subscriptions, OrderBook book) {
    return subscriptions.subscribe("orders", book::place);
  }

  // readme:orders:end

  // readme:refunds:start
  /** Refunds: Spring Integration's inbound channel adapter, in MANUAL mode. */
  @Bean
  MessageChannel refundRequests() {
    return new DirectChannel();
  }

  @Bean
  PubSubInboundChannelAdapter refundsAdapter(
      PubSubTemplate pubSubTemplate, @Qualifier("refundRequests") MessageChannel channel) {
    PubSubInboundChannelAdapter adapter =
        new PubSubInboundChannelAdapter(pubSubTemplate, "refunds-sub");
    adapter.setOutputChannel(channel);
    adapter.setAckMode(AckMode.MANUAL); // the guarded handler acks, nacks and parks
    return adapter;
  }

  @Bean
  @ServiceActivator(inputChannel = "refundRequests")
  GuardedPubSubMessageHandler refunds(GuardedSubscriptions subscriptions, OrderBook book) {
    return GuardedPubSubMessageHandler.of(subscriptions.consumer("refunds", book::refund));
  }
  // readme:refunds:end
}
