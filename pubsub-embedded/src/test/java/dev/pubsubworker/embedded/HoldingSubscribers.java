package dev.pubsubworker.embedded;

import com.google.cloud.pubsub.v1.AckReplyConsumer;
import com.google.cloud.pubsub.v1.Subscriber;
import com.google.pubsub.v1.SubscriptionName;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Real {@code Subscriber}s on one subscription that hold every message they get, so what each one
 * received is what the server dealt it. Each asks for 60 s deadline extensions, so their leases
 * outlast what a scenario lets pass. Closing acks everything they hold and stops them.
 */
final class HoldingSubscribers implements AutoCloseable {

  /** How each client tells the server its flow control. */
  enum FlowControl {
    /** The client's default window (1,000 messages, 100 MB), sent to the server. */
    WINDOW_SENT,
    /** Legacy flow control: the limits stay in the client; the server is sent no window. */
    NO_WINDOW_SENT
  }

  private final List<Subscriber> subscribers = new ArrayList<>();
  private final List<List<String>> received = new ArrayList<>();
  private final List<AckReplyConsumer> held = new ArrayList<>();
  private boolean draining;

  private HoldingSubscribers() {}

  /**
   * Starts {@code count} holding clients on {@code subscription} together (so that their streams
   * open within moments of each other) and waits until they run.
   */
  static HoldingSubscribers start(
      PubSubTarget target, SubscriptionName subscription, int count, FlowControl flowControl) {
    HoldingSubscribers clients = new HoldingSubscribers();
    try {
      for (int i = 0; i < count; i++) {
        clients.add(target, subscription, flowControl);
      }
      List<Subscriber> started;
      synchronized (clients) {
        started = new ArrayList<>(clients.subscribers);
      }
      started.forEach(Subscriber::awaitRunning);
    } catch (RuntimeException e) {
      clients.close();
      throw e;
    }
    return clients;
  }

  private void add(PubSubTarget target, SubscriptionName subscription, FlowControl flowControl) {
    List<String> ids = new ArrayList<>();
    synchronized (this) {
      received.add(ids);
    }
    Subscriber subscriber =
        target
            .subscriber(
                subscription,
                (message, consumer) -> {
                  synchronized (this) {
                    if (draining) {
                      consumer.ack();
                      return;
                    }
                    ids.add(message.getMessageId());
                    held.add(consumer);
                  }
                })
            .setUseLegacyFlowControl(flowControl == FlowControl.NO_WINDOW_SENT)
            .setMinDurationPerAckExtensionDuration(Duration.ofSeconds(60))
            .build();
    synchronized (this) {
      subscribers.add(subscriber);
    }
    subscriber.startAsync();
  }

  /** How many messages each client received so far, in start order. */
  synchronized List<Integer> shares() {
    List<Integer> shares = new ArrayList<>();
    received.forEach(ids -> shares.add(ids.size()));
    return shares;
  }

  /** How many messages the clients received in all (a redelivery counts again). */
  synchronized int total() {
    return received.stream().mapToInt(List::size).sum();
  }

  /** The distinct message ids the clients received. */
  synchronized Set<String> distinctIds() {
    Set<String> ids = new HashSet<>();
    received.forEach(ids::addAll);
    return ids;
  }

  /** The message ids client {@code index} received, in order. */
  synchronized List<String> idsOf(int index) {
    return new ArrayList<>(received.get(index));
  }

  /** Acks every held message (and whatever still comes), then stops every client. */
  @Override
  public void close() {
    List<Subscriber> toStop;
    synchronized (this) {
      draining = true;
      held.forEach(AckReplyConsumer::ack);
      held.clear();
      toStop = new ArrayList<>(subscribers);
    }
    toStop.forEach(Subscriber::stopAsync);
    for (Subscriber subscriber : toStop) {
      try {
        subscriber.awaitTerminated(30, TimeUnit.SECONDS);
      } catch (TimeoutException e) {
        throw new IllegalStateException("a holding subscriber did not stop within 30 s", e);
      } catch (IllegalStateException failed) {
        // A client that failed (its stream refused) has nothing left to stop.
      }
    }
  }
}
