package dev.pubsubworker.pubsub;

import com.google.cloud.pubsub.v1.AckResponse;
import com.google.pubsub.v1.PubsubMessage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A receiver's listeners as one: each event goes to every listener, and one that throws (or whose
 * delivery observer throws) is logged and skipped, so that observation never changes how a delivery
 * is settled.
 */
final class Listeners implements ReceiverListener {

  private static final Logger log = LoggerFactory.getLogger(Listeners.class);

  private final List<ReceiverListener> listeners;

  Listeners(List<ReceiverListener> listeners) {
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
  public DeliveryObserver deliveryStarted(String subscription, PubsubMessage message) {
    List<DeliveryObserver> observers = new ArrayList<>(1);
    for (ReceiverListener l : listeners) {
      try {
        DeliveryObserver o = l.deliveryStarted(subscription, message);
        if (o != null && o != DeliveryObserver.NONE) {
          observers.add(o);
        }
      } catch (RuntimeException e) {
        log.warn("receiver listener {} threw; ignored", l.getClass().getName(), e);
      }
    }
    return observers.isEmpty() ? DeliveryObserver.NONE : new Observers(observers);
  }

  private void each(Consumer<ReceiverListener> call) {
    for (ReceiverListener l : listeners) {
      try {
        call.accept(l);
      } catch (RuntimeException e) {
        log.warn("receiver listener {} threw; ignored", l.getClass().getName(), e);
      }
    }
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
    public void settling(Outcome outcome) {
      eachObserver(o -> o.settling(outcome));
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
}
