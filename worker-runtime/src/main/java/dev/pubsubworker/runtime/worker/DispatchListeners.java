package dev.pubsubworker.runtime.worker;

import com.google.cloud.pubsub.v1.AckResponse;
import dev.pubsubworker.runtime.pubsub.DispatchListener;
import dev.pubsubworker.runtime.pubsub.Outcome;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Fans dispatch events out to several listeners; one that throws is logged and skipped. */
final class DispatchListeners implements DispatchListener {

  private static final Logger log = LoggerFactory.getLogger(DispatchListeners.class);

  private final List<DispatchListener> listeners;

  DispatchListeners(List<DispatchListener> listeners) {
    this.listeners = List.copyOf(listeners);
  }

  @Override
  public void received(String subscription) {
    each(l -> l.received(subscription));
  }

  @Override
  public void settled(String subscription, Outcome outcome, Duration handlerTime) {
    each(l -> l.settled(subscription, outcome, handlerTime));
  }

  @Override
  public void inFlight(String subscription, int delta) {
    each(l -> l.inFlight(subscription, delta));
  }

  @Override
  public void parked(String subscription, int delta) {
    each(l -> l.parked(subscription, delta));
  }

  @Override
  public void parkedSettled(String subscription, Outcome outcome, Duration waited) {
    each(l -> l.parkedSettled(subscription, outcome, waited));
  }

  @Override
  public void ackResponse(String subscription, AckResponse response) {
    each(l -> l.ackResponse(subscription, response));
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
