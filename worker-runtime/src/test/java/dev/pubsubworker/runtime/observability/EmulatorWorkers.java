package dev.pubsubworker.runtime.observability;

import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.core.GuardListener;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.pubsub.DispatchListener;
import dev.pubsubworker.runtime.testing.TestPubSub;
import dev.pubsubworker.runtime.testing.WorkerHarness;
import dev.pubsubworker.runtime.worker.Worker;
import dev.pubsubworker.testservices.PubSubEmulator;
import dev.pubsubworker.testservices.SubscriptionFixture;
import dev.pubsubworker.testservices.SubscriptionSpec;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Real workers with their observability on Pub/Sub (the embedded server unless a test passes
 * another), on a fresh topic and subscription: a {@link WorkerHarness} plus metrics and health
 * wired the way {@code run} wires them. The HTTP server binds an OS-chosen port on 127.0.0.1.
 * Everything started is stopped on close.
 */
final class EmulatorWorkers implements AutoCloseable {

  private final WorkerHarness harness;
  final PubSubEmulator pubsub;
  final SubscriptionFixture fixture;
  private final List<Observability> observabilities = new ArrayList<>();

  EmulatorWorkers(SubscriptionSpec spec) {
    this(TestPubSub.embedded(), spec);
  }

  EmulatorWorkers(PubSubEmulator server, SubscriptionSpec spec) {
    harness = new WorkerHarness(server, spec);
    pubsub = harness.pubsub;
    fixture = harness.fixture;
  }

  /** The settings of a worker whose subscription {@code test} runs handler {@code test}. */
  WorkerConfig config(String subscriptionSettings, String extra) {
    return harness.config(subscriptionSettings, extra);
  }

  /** Metrics and health for {@code config}, serving on an OS-chosen port of 127.0.0.1. */
  Observability observability(WorkerConfig config) {
    Observability o = Observability.create(config, new InetSocketAddress("127.0.0.1", 0));
    observabilities.add(o);
    return o;
  }

  /** Builds (without starting) a worker observed by {@code observability}. */
  Worker create(WorkerConfig config, MessageHandler handler, Observability observability) {
    return harness.create(
        config, handler, observability::guardListeners, observability.dispatchListeners());
  }

  /** Builds (without starting) a worker observed by the given listeners only. */
  Worker create(
      WorkerConfig config,
      MessageHandler handler,
      Function<String, List<GuardListener>> guardListeners,
      List<DispatchListener> dispatchListeners) {
    return harness.create(config, handler, guardListeners, dispatchListeners);
  }

  /** Publishes {@code data} with attributes; returns the message id. */
  String publish(String data, Map<String, String> attributes) {
    return harness.publish(data, attributes);
  }

  @Override
  public void close() {
    harness.close();
    for (Observability o : observabilities) {
      o.close();
    }
  }
}
