package dev.pubsubworker.runtime.worker;

import dev.pubsubworker.runtime.pubsub.DispatchListener;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Fans the worker's stream events out to several listeners; one that throws is logged and skipped.
 * The receivers' events reach each listener directly (every subscription's receiver has them all as
 * its listeners, and guards each call the same way).
 */
final class DispatchListeners implements DispatchListener {

  private static final Logger log = LoggerFactory.getLogger(DispatchListeners.class);

  private final List<DispatchListener> listeners;

  DispatchListeners(List<DispatchListener> listeners) {
    this.listeners = List.copyOf(listeners);
  }

  @Override
  public void streamOpened(String subscription) {
    each(l -> l.streamOpened(subscription));
  }

  @Override
  public void streamError(String subscription, String code) {
    each(l -> l.streamError(subscription, code));
  }

  private void each(Consumer<DispatchListener> call) {
    for (DispatchListener l : listeners) {
      try {
        call.accept(l);
      } catch (RuntimeException e) {
        log.warn("dispatch listener {} threw; ignored", l.getClass().getName(), e);
      }
    }
  }
}
