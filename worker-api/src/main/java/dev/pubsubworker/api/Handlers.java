package dev.pubsubworker.api;

import com.google.inject.Binder;
import com.google.inject.binder.LinkedBindingBuilder;
import com.google.inject.multibindings.MapBinder;

/**
 * Contributes named handlers from plugin modules. All plugins share one map of handlers, so two
 * plugins that bind the same name make the worker fail at start-up with an error naming both.
 *
 * <pre>{@code
 * protected void configure() {
 *   Handlers.bind(binder(), "orders").to(OrdersHandler.class);
 * }
 * }</pre>
 */
public final class Handlers {

  private Handlers() {}

  /**
   * Starts a binding of the handler called {@code name}.
   *
   * @param binder the plugin module's binder
   * @param name the handler's name, as subscriptions refer to it
   * @return the builder to finish the binding with ({@code to}, {@code toInstance}, ...)
   */
  public static LinkedBindingBuilder<MessageHandler> bind(Binder binder, String name) {
    // Skip this class so that errors (a duplicate name) point at the plugin module that called.
    return MapBinder.newMapBinder(
            binder.skipSources(Handlers.class), String.class, MessageHandler.class)
        .addBinding(name);
  }
}
