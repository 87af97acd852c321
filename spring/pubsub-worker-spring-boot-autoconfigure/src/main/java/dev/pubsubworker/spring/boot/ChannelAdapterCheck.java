package dev.pubsubworker.spring.boot;

import com.google.cloud.spring.pubsub.integration.AckMode;
import com.google.cloud.spring.pubsub.integration.inbound.PubSubInboundChannelAdapter;
import java.util.HashMap;
import java.util.Map;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.integration.endpoint.IntegrationConsumer;
import org.springframework.messaging.MessageChannel;

/**
 * At start-up, finds every {@link PubSubInboundChannelAdapter} whose output channel is the input
 * channel of an endpoint that runs a {@link GuardedPubSubMessageHandler}: refuses to start if the
 * adapter is not in {@link AckMode#MANUAL} (in AUTO or AUTO_ACK it would ack a parked message
 * before it ran, or ack what the engine nacked), and otherwise shows the health indicator whether
 * the adapter runs. Only a direct wiring (adapter, channel, endpoint) is found; a flow with steps
 * between them is not checked.
 */
final class ChannelAdapterCheck implements SmartInitializingSingleton {

  private final ListableBeanFactory beans;
  private final GuardedSubscriptions subscriptions;

  ChannelAdapterCheck(ListableBeanFactory beans, GuardedSubscriptions subscriptions) {
    this.beans = beans;
    this.subscriptions = subscriptions;
  }

  @Override
  public void afterSingletonsInstantiated() {
    Map<MessageChannel, GuardedPubSubMessageHandler> handlers = new HashMap<>();
    for (IntegrationConsumer endpoint : beans.getBeansOfType(IntegrationConsumer.class).values()) {
      if (endpoint.getHandler() instanceof GuardedPubSubMessageHandler h
          && endpoint.getInputChannel() != null) {
        handlers.put(endpoint.getInputChannel(), h);
      }
    }
    if (handlers.isEmpty()) {
      return;
    }
    beans
        .getBeansOfType(PubSubInboundChannelAdapter.class)
        .forEach(
            (name, adapter) -> {
              MessageChannel out = adapter.getOutputChannel();
              GuardedPubSubMessageHandler h = out == null ? null : handlers.get(out);
              if (h == null) {
                return;
              }
              String id = h.consumer().subscription();
              if (adapter.getAckMode() != AckMode.MANUAL) {
                throw new IllegalStateException(
                    "PubSubInboundChannelAdapter '"
                        + name
                        + "' feeds the guarded handler of subscription "
                        + id
                        + " in AckMode."
                        + adapter.getAckMode()
                        + ": set adapter.setAckMode(AckMode.MANUAL). The guarded handler acks and"
                        + " nacks itself and parks held keys; the adapter would ack a parked"
                        + " message before it ran");
              }
              subscriptions.subscription(id).ifPresent(s -> s.adapter(name, adapter::isRunning));
            });
  }
}
