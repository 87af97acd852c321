package dev.pubsubworker.runtime.testing;

import com.google.inject.Module;
import com.typesafe.config.Config;
import dev.pubsubworker.api.HandlerContext;
import dev.pubsubworker.api.Handlers;
import dev.pubsubworker.api.InboundMessage;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.api.WorkerPlugin;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The class-path plugin of the runtime's tests ({@code orders-test}, listed in the test resources'
 * service file, so every worker on the test class path has it): its handler {@code orders} logs
 * {@code "placed order ID (fence N)"} for a message's {@code order_id} attribute, or its message id
 * without one, after a last lease check. It stands in for the example plugin, which the runtime
 * does not depend on; it has no settings.
 */
public final class OrdersTestPlugin implements WorkerPlugin {

  /** The plugin's name. */
  public static final String NAME = "orders-test";

  /** The handler it binds. */
  public static final String HANDLER = "orders";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Module module(Config config) {
    return binder -> Handlers.bind(binder, HANDLER).toInstance(new PlaceOrder());
  }

  private static final class PlaceOrder implements MessageHandler {

    private static final Logger log = LoggerFactory.getLogger(PlaceOrder.class);

    @Override
    public void handle(InboundMessage message, HandlerContext context) {
      String order = message.attribute("order_id").orElse(message.messageId());
      context.checkLease();
      log.info("placed order {} (fence {})", order, context.fencingToken().orElse(0));
    }
  }
}
