package dev.pubsubworker.spring.boot;

import com.google.api.core.ApiService;
import com.google.cloud.pubsub.v1.Subscriber;
import com.google.pubsub.v1.ProjectSubscriptionName;
import dev.pubsubworker.pubsub.GuardedReceiver;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * One guarded subscription of {@link GuardedSubscriptions}: its id, the Pub/Sub subscription, the
 * receiver its messages run through and, where the application lets the starter see it, the stream
 * that feeds it (the {@code Subscriber} of {@link GuardedSubscriptions#subscribe}, or the inbound
 * channel adapter that feeds its {@link GuardedPubSubMessageHandler}). Thread-safe.
 */
public final class GuardedSubscription {

  private final String id;
  private final ProjectSubscriptionName subscription;
  private final GuardedPubSubConsumer consumer;
  private final boolean subscribed;
  private volatile @Nullable Subscriber subscriber;
  private volatile @Nullable Adapter adapter;

  GuardedSubscription(
      String id,
      ProjectSubscriptionName subscription,
      GuardedPubSubConsumer consumer,
      boolean subscribed) {
    this.id = id;
    this.subscription = subscription;
    this.consumer = consumer;
    this.subscribed = subscribed;
  }

  /** The id: its entry under {@code pubsub-worker.subscriptions}. */
  public String id() {
    return id;
  }

  /** The Pub/Sub subscription's full path, {@code projects/P/subscriptions/S}. */
  public String subscription() {
    return subscription.toString();
  }

  /** The receiver its messages run through. */
  public GuardedReceiver receiver() {
    return consumer.receiver();
  }

  /** The consumer that hands Spring Cloud GCP's messages to the receiver. */
  public GuardedPubSubConsumer consumer() {
    return consumer;
  }

  /**
   * The streaming {@code Subscriber} that {@link GuardedSubscriptions#subscribe} opened through
   * {@code PubSubTemplate}; empty before the application context started it, and for a subscription
   * whose messages come through a consumer or handler the application wired itself.
   */
  public Optional<Subscriber> subscriber() {
    return Optional.ofNullable(subscriber);
  }

  ProjectSubscriptionName subscriptionName() {
    return subscription;
  }

  /** Whether {@link GuardedSubscriptions} opens its subscriber (vs. the application's wiring). */
  boolean subscribed() {
    return subscribed;
  }

  void subscriber(Subscriber s) {
    this.subscriber = s;
  }

  void adapter(String beanName, BooleanSupplier running) {
    this.adapter = new Adapter(beanName, running);
  }

  /** What the health indicator can see of the stream that feeds this subscription. */
  Stream stream() {
    Subscriber s = subscriber;
    if (s != null) {
      ApiService.State state = s.state();
      String failure = null;
      if (state == ApiService.State.FAILED) {
        Throwable cause = s.failureCause();
        failure = cause == null ? "failed" : cause.toString();
      }
      return new Stream("subscriber", state.name(), state == ApiService.State.RUNNING, failure);
    }
    Adapter a = adapter;
    if (a != null) {
      boolean running = a.running().getAsBoolean();
      return new Stream(
          "channel adapter " + a.beanName(), running ? "RUNNING" : "STOPPED", running, null);
    }
    if (subscribed) {
      return new Stream("subscriber", "NEW", false, null);
    }
    return new Stream("not visible", "UNKNOWN", true, null);
  }

  @Override
  public String toString() {
    return "GuardedSubscription[" + id + " <- " + subscription + "]";
  }

  private record Adapter(String beanName, BooleanSupplier running) {}

  /**
   * @param source what feeds it: {@code subscriber}, {@code channel adapter NAME}, or {@code not
   *     visible} (a consumer the application subscribed itself)
   * @param state the subscriber's {@code ApiService.State}, the adapter's RUNNING/STOPPED, or
   *     UNKNOWN
   * @param up whether it counts as up (an invisible stream is not held against health)
   * @param failure the subscriber's failure cause, if it failed
   */
  record Stream(String source, String state, boolean up, @Nullable String failure) {}
}
