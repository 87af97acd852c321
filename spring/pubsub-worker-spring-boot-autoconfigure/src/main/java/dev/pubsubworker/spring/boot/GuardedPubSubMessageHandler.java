package dev.pubsubworker.spring.boot;

import com.google.cloud.spring.pubsub.integration.AckMode;
import com.google.cloud.spring.pubsub.integration.inbound.PubSubInboundChannelAdapter;
import com.google.cloud.spring.pubsub.support.BasicAcknowledgeablePubsubMessage;
import com.google.cloud.spring.pubsub.support.GcpPubSubHeaders;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.integration.handler.AbstractReplyProducingMessageHandler;
import org.springframework.messaging.Message;
import org.springframework.messaging.MessageHandler;
import org.springframework.messaging.MessageHandlingException;

/**
 * The end of a Spring Integration flow that starts at a {@link PubSubInboundChannelAdapter} in
 * {@link AckMode#MANUAL}: a {@link MessageHandler} that runs each message through a {@link
 * GuardedPubSubConsumer}, which acks or nacks it by the engine's outcome table (parking a held key,
 * dead-lettering a terminal failure).
 *
 * <pre>{@code
 * @Bean
 * PubSubInboundChannelAdapter refundsAdapter(PubSubTemplate template, MessageChannel refunds) {
 *   PubSubInboundChannelAdapter adapter = new PubSubInboundChannelAdapter(template, "refunds-sub");
 *   adapter.setOutputChannel(refunds);
 *   adapter.setAckMode(AckMode.MANUAL); // the guarded handler acks and nacks
 *   return adapter;
 * }
 *
 * @Bean
 * @ServiceActivator(inputChannel = "refunds")
 * GuardedPubSubMessageHandler refundsHandler(GuardedSubscriptions subscriptions) {
 *   return GuardedPubSubMessageHandler.of(subscriptions.consumer("refunds", handler));
 * }
 * }</pre>
 *
 * <p>The handler sees the original Pub/Sub message (the {@link GcpPubSubHeaders#ORIGINAL_MESSAGE}
 * header the adapter sets), not the Spring message's payload: transformations earlier in the flow
 * do not change what it runs on. The adapter must be in {@code MANUAL} mode: in {@code AUTO} or
 * {@code AUTO_ACK} it would ack a parked message as soon as this handler returned, before it ran.
 * The auto-configuration refuses to start when an adapter feeds this handler's input channel in
 * another mode.
 *
 * <p>It produces no reply (a one-way endpoint, like a service activator that returns nothing); it
 * is a Spring Integration handler so that an endpoint ({@code @ServiceActivator}, {@code
 * IntegrationFlow.handle}) uses it as it is, and the start-up check can find it. Thread-safe.
 */
public final class GuardedPubSubMessageHandler extends AbstractReplyProducingMessageHandler {

  private final GuardedPubSubConsumer consumer;

  private GuardedPubSubMessageHandler(GuardedPubSubConsumer consumer) {
    this.consumer = consumer;
    setRequiresReply(false);
  }

  /** A handler that runs every message through {@code consumer}. */
  public static GuardedPubSubMessageHandler of(GuardedPubSubConsumer consumer) {
    return new GuardedPubSubMessageHandler(Objects.requireNonNull(consumer, "consumer"));
  }

  /**
   * Dispatches the message's original Pub/Sub message; returns (no reply) before a parked message
   * is settled.
   *
   * @throws MessageHandlingException if the message carries no {@link
   *     GcpPubSubHeaders#ORIGINAL_MESSAGE} (it did not come from a Pub/Sub inbound channel
   *     adapter), so there is nothing to ack or nack
   */
  @Override
  protected @Nullable Object handleRequestMessage(Message<?> message) {
    Object original = message.getHeaders().get(GcpPubSubHeaders.ORIGINAL_MESSAGE);
    if (!(original instanceof BasicAcknowledgeablePubsubMessage pubsub)) {
      throw new MessageHandlingException(
          message,
          "GuardedPubSubMessageHandler["
              + consumer.subscription()
              + "] takes messages from a PubSubInboundChannelAdapter (AckMode.MANUAL), but this"
              + " one has no "
              + GcpPubSubHeaders.ORIGINAL_MESSAGE
              + " header");
    }
    consumer.accept(pubsub);
    return null;
  }

  @Override
  public String getComponentType() {
    return "pubsub-worker:guarded-handler";
  }

  /** The consumer messages run through. */
  public GuardedPubSubConsumer consumer() {
    return consumer;
  }

  @Override
  public String toString() {
    return "GuardedPubSubMessageHandler[" + consumer.subscription() + "]";
  }
}
