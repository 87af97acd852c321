package dev.pubsubworker.runtime.observability;

import com.google.api.core.InternalApi;
import com.google.cloud.pubsub.v1.AckResponse;
import dev.pubsubworker.core.GuardListener;
import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.pubsub.micrometer.ReceiverMetrics;
import dev.pubsubworker.runtime.pubsub.DispatchListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's metrics (names in {@link MetricNames}): a {@link MeterBinder} that observes every
 * subscription's receiver and guard through the engine's {@link ReceiverMetrics} (a {@link
 * DispatchListener} here, and the {@link GuardListener} {@link #guardListener} binds to a
 * subscription), and adds the worker's own: streaming-pull streams and the readiness probe's
 * lock-store reads.
 *
 * <p>Every configured subscription's counters and gauges are registered at zero when bound, so
 * rates and alerts work from the first scrape. Histogram timers appear with their first sample.
 * Events that arrive before {@link #bindTo} are dropped.
 *
 * <p>Thread-safe. No listener method ever throws: a failure is logged (once at WARN, then at DEBUG)
 * and the event dropped, so metrics never change the worker's control flow.
 */
@InternalApi("the meters behind Observability; their names are in MetricNames")
public final class WorkerMetrics implements MeterBinder, DispatchListener {

  private static final Logger log = LoggerFactory.getLogger(WorkerMetrics.class);

  private final List<String> subscriptions;
  private final ReceiverMetrics receivers;
  private final AtomicBoolean warned = new AtomicBoolean();
  private volatile MeterRegistry registry;

  /**
   * @param subscriptionIds the configured subscriptions' ids, registered at zero when bound
   */
  public WorkerMetrics(Collection<String> subscriptionIds) {
    this.subscriptions = List.copyOf(subscriptionIds);
    this.receivers = ReceiverMetrics.of(subscriptions);
  }

  /**
   * Registers every configured subscription's meters in {@code registry}; from then on events are
   * recorded there.
   *
   * @throws IllegalStateException if already bound to another registry
   */
  @Override
  public synchronized void bindTo(MeterRegistry registry) {
    if (this.registry != null && this.registry != registry) {
      throw new IllegalStateException("WorkerMetrics is already bound to another registry");
    }
    receivers.bindTo(registry);
    this.registry = registry;
    subscriptions.forEach(s -> streamsOpened(registry, s));
  }

  // DispatchListener: the receivers' events go to the engine's metrics.

  @Override
  public void received(String subscription) {
    receivers.received(subscription);
  }

  @Override
  public void settled(String subscription, Outcome outcome, Duration handlerTime) {
    receivers.settled(subscription, outcome, handlerTime);
  }

  @Override
  public void inFlight(String subscription, int delta) {
    receivers.inFlight(subscription, delta);
  }

  @Override
  public void parked(String subscription, int delta) {
    receivers.parked(subscription, delta);
  }

  @Override
  public void parkedSettled(String subscription, Outcome outcome, Duration waited) {
    receivers.parkedSettled(subscription, outcome, waited);
  }

  @Override
  public void ackResponse(String subscription, AckResponse response) {
    receivers.ackResponse(subscription, response);
  }

  @Override
  public void streamOpened(String subscription) {
    safely(
        () -> {
          MeterRegistry r = registry;
          if (r != null) {
            streamsOpened(r, subscription).increment();
          }
        });
  }

  @Override
  public void streamError(String subscription, String code) {
    safely(
        () -> {
          MeterRegistry r = registry;
          if (r == null) {
            return;
          }
          Counter.builder(MetricNames.STREAM_ERRORS)
              .description("Streaming pulls that closed with an error, by gRPC status code")
              .tag(MetricNames.SUBSCRIPTION, subscription)
              .tag(MetricNames.CODE, code.toLowerCase(java.util.Locale.ROOT).replace('_', '-'))
              .register(r)
              .increment();
        });
  }

  /**
   * The listener for the guard of subscription {@code subscriptionId}: its events are recorded
   * under that subscription (lock-store call timings under no subscription).
   */
  public GuardListener guardListener(String subscriptionId) {
    return receivers.guardListener(subscriptionId);
  }

  /** Records one lock-store call by {@code verb} (also the readiness probe's). Never throws. */
  void lockStoreCall(String verb, Duration latency, boolean succeeded) {
    receivers.recordStoreCall(verb, latency, succeeded);
  }

  private static Counter streamsOpened(MeterRegistry registry, String subscription) {
    return Counter.builder(MetricNames.STREAMS_OPENED)
        .description("Streaming pulls opened, first and reconnects")
        .tag(MetricNames.SUBSCRIPTION, subscription)
        .register(registry);
  }

  private void safely(Runnable record) {
    try {
      record.run();
    } catch (RuntimeException e) {
      if (warned.compareAndSet(false, true)) {
        log.warn("recording a metric failed; the event is dropped (further failures at DEBUG)", e);
      } else {
        log.debug("recording a metric failed; the event is dropped", e);
      }
    }
  }
}
