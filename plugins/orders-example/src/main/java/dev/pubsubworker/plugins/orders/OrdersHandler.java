package dev.pubsubworker.plugins.orders;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pubsubworker.api.HandlerContext;
import dev.pubsubworker.api.InboundMessage;
import dev.pubsubworker.api.MessageHandler;
import jakarta.inject.Inject;
import jakarta.inject.Named;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code orders} handler: parses the order, rejects poison, and places it through the {@link
 * OrderSink} with the key and fencing token.
 *
 * <p>Poison (logged, then acked by returning normally): a payload that is not an order, an order
 * whose id differs from the {@code order_id} attribute it was keyed by, a quantity outside
 * 1..{@code max-quantity}. Anything the sink throws propagates, so the message is redelivered.
 */
final class OrdersHandler implements MessageHandler {

  private static final Logger log = LoggerFactory.getLogger(OrdersHandler.class);

  private static final ObjectMapper JSON =
      new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

  private final OrderSink sink;
  private final int maxQuantity;

  @Inject
  OrdersHandler(OrderSink sink, @Named("orders.max-quantity") int maxQuantity) {
    this.sink = sink;
    this.maxQuantity = maxQuantity;
  }

  @Override
  public void handle(InboundMessage message, HandlerContext context) throws Exception {
    Order order;
    try {
      order = JSON.readValue(message.data(), Order.class);
    } catch (JsonProcessingException | IllegalArgumentException | NullPointerException e) {
      // Poison: it will never parse. Ack it (return) instead of having it redelivered until the
      // dead-letter topic takes it; the log line is the alert. The payload is not logged.
      log.warn(
          "poison message {}: not an order ({} bytes); acked without placing",
          message.messageId(),
          message.data().length);
      return;
    }
    String attribute = message.attribute("order_id").orElse(order.orderId());
    if (!attribute.equals(order.orderId())) {
      log.warn(
          "poison message {}: keyed by order_id attribute but the payload is another order; acked",
          message.messageId());
      return;
    }
    if (order.quantity() < 1 || order.quantity() > maxQuantity) {
      log.warn(
          "poison message {}: quantity {} outside 1..{}; acked without placing",
          message.messageId(),
          order.quantity(),
          maxQuantity);
      return;
    }
    String key = context.key().orElse("unguarded:" + message.messageId());
    long fence = context.fencingToken().orElse(0);
    // Last check before the irreversible step: a lost lease means another worker owns the key.
    context.checkLease();
    sink.place(key, fence, order);
    log.info("placed order {} (fence {})", order.orderId(), fence);
  }
}
