package dev.pubsubworker.runtime.worker;

import com.google.cloud.pubsub.v1.AckResponse;
import com.google.pubsub.v1.PubsubMessage;
import dev.pubsubworker.runtime.pubsub.DeliveryObserver;
import dev.pubsubworker.runtime.pubsub.DispatchListener;
import dev.pubsubworker.runtime.pubsub.Outcome;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
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

  @Override
  public DeliveryObserver deliveryStarted(String subscription, PubsubMessage message) {
    List<DeliveryObserver> observers = new ArrayList<>(1);
    for (DispatchListener l : listeners) {
      try {
        DeliveryObserver o = l.deliveryStarted(subscription, message);
        if (o != null && o != DeliveryObserver.NONE) {
          observers.add(o);
        }
      } catch (RuntimeException e) {
        log.warn("dispatch listener {} threw; ignored", l.getClass().getName(), e);
      }
    }
    return observers.isEmpty() ? DeliveryObserver.NONE : new Observers(observers);
  }

  /** The observers of one delivery, each call guarded so that none can change the settlement. */
  private static final class Observers implements DeliveryObserver {
    private final List<DeliveryObserver> observers;

    Observers(List<DeliveryObserver> observers) {
      this.observers = observers;
    }

    @Override
    public Scope activate() {
      return scopes(DeliveryObserver::activate);
    }

    @Override
    public void keyResolved(String storedKey) {
      eachObserver(o -> o.keyResolved(storedKey));
    }

    @Override
    public void fenced(long fence) {
      eachObserver(o -> o.fenced(fence));
    }

    @Override
    public Scope handlerStarted() {
      return scopes(DeliveryObserver::handlerStarted);
    }

    @Override
    public void handlerFailed(Throwable error) {
      eachObserver(o -> o.handlerFailed(error));
    }

    @Override
    public void settled(Outcome outcome) {
      eachObserver(o -> o.settled(outcome));
    }

    private Scope scopes(Function<DeliveryObserver, Scope> open) {
      List<Scope> opened = new ArrayList<>(observers.size());
      eachObserver(o -> opened.add(open.apply(o)));
      return () -> {
        for (int i = opened.size() - 1; i >= 0; i--) {
          try {
            opened.get(i).close();
          } catch (RuntimeException e) {
            log.warn("delivery observer scope threw on close; ignored", e);
          }
        }
      };
    }

    private void eachObserver(Consumer<DeliveryObserver> call) {
      for (DeliveryObserver o : observers) {
        try {
          call.accept(o);
        } catch (RuntimeException e) {
          log.warn("delivery observer {} threw; ignored", o.getClass().getName(), e);
        }
      }
    }
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
