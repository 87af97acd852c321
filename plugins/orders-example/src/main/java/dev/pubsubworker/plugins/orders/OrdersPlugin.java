package dev.pubsubworker.plugins.orders;

import com.google.inject.AbstractModule;
import com.google.inject.Module;
import com.google.inject.Singleton;
import com.google.inject.name.Names;
import com.typesafe.config.Config;
import dev.pubsubworker.api.Handlers;
import dev.pubsubworker.api.WorkerPlugin;

/**
 * The example plugin ({@code orders-example}): binds the {@code orders} handler and its sink.
 * Settings under {@code pubsub-worker.plugins.orders-example}, defaults in this jar's
 * reference.conf: {@code max-quantity}.
 */
public final class OrdersPlugin implements WorkerPlugin {

  /** The plugin's name. */
  public static final String NAME = "orders-example";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Module module(Config config) {
    int maxQuantity = config.getInt("max-quantity");
    return new AbstractModule() {
      @Override
      protected void configure() {
        bindConstant().annotatedWith(Names.named("orders.max-quantity")).to(maxQuantity);
        bind(OrderLedger.class).in(Singleton.class);
        bind(OrderSink.class).to(OrderLedger.class);
        Handlers.bind(binder(), "orders").to(OrdersHandler.class);
      }
    };
  }
}
