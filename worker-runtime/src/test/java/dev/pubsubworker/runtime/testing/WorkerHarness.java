package dev.pubsubworker.runtime.testing;

import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.typesafe.config.ConfigFactory;
import dev.pubsubworker.api.Handlers;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.api.WorkerPlugin;
import dev.pubsubworker.core.GuardListener;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.plugin.LoadedPlugin;
import dev.pubsubworker.runtime.pubsub.DispatchListener;
import dev.pubsubworker.runtime.worker.Worker;
import dev.pubsubworker.testservices.PubSubEmulator;
import dev.pubsubworker.testservices.SubscriptionFixture;
import dev.pubsubworker.testservices.SubscriptionSpec;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Runs real workers against Pub/Sub on a fresh topic and subscription: builds the HOCON a
 * deployment would write, installs the test's handler as a plugin, and stops every worker at the
 * end. Shared by the runtime's end-to-end and observability tests. Pub/Sub is the embedded server
 * unless a test passes another ({@link TestPubSub}).
 */
public final class WorkerHarness implements AutoCloseable {

  /** The Pub/Sub server. */
  public final PubSubEmulator pubsub;

  /** The fresh topic and subscription. */
  public final SubscriptionFixture fixture;

  private final List<Worker> workers = new ArrayList<>();

  /** Creates a topic and a subscription as {@code spec} says on the embedded server. */
  public WorkerHarness(SubscriptionSpec spec) {
    this(TestPubSub.embedded(), spec);
  }

  /** Creates a topic and a subscription as {@code spec} says on {@code pubsub}. */
  public WorkerHarness(PubSubEmulator pubsub, SubscriptionSpec spec) {
    this.pubsub = pubsub;
    fixture = pubsub.createSubscription(spec);
  }

  /**
   * The settings of a worker whose subscription {@code test} (on this harness's subscription) runs
   * handler {@code test}, with {@code subscriptionSettings} inside the subscription and {@code
   * extra} appended at top level.
   */
  public WorkerConfig config(String subscriptionSettings, String extra) {
    String hocon =
        """
        pubsub-worker {
          project-id = "%s"
          pubsub-emulator-host = "%s"
          shutdown-grace = 10s
          subscriptions {
            test {
              name = "%s"
              handler = "test"
              %s
            }
          }
        }
        %s
        """
            .formatted(
                pubsub.projectId(),
                pubsub.hostPort(),
                fixture.subscription().getSubscription(),
                subscriptionSettings,
                extra);
    return WorkerConfig.load(
        ConfigFactory.parseString(hocon).withFallback(ConfigFactory.defaultReference()).resolve());
  }

  /** Builds (without starting) a worker whose {@code test} handler is {@code handler}. */
  public Worker create(
      String subscriptionSettings,
      String extra,
      MessageHandler handler,
      List<DispatchListener> listeners) {
    return create(config(subscriptionSettings, extra), handler, id -> List.of(), listeners);
  }

  /**
   * Builds (without starting) a worker on {@code config} with the given listeners ({@code
   * guardListeners} by subscription id).
   */
  public Worker create(
      WorkerConfig config,
      MessageHandler handler,
      Function<String, List<GuardListener>> guardListeners,
      List<DispatchListener> dispatchListeners) {
    WorkerPlugin plugin =
        new WorkerPlugin() {
          @Override
          public String name() {
            return "test";
          }

          @Override
          public com.google.inject.Module module(com.typesafe.config.Config c) {
            return binder -> Handlers.bind(binder, "test").toInstance(handler);
          }
        };
    Worker worker =
        Worker.newBuilder(config)
            .plugins(List.of(new LoadedPlugin(plugin, "test", ConfigFactory.empty())))
            .guardListeners(guardListeners)
            .dispatchListeners(dispatchListeners)
            .build();
    workers.add(worker);
    return worker;
  }

  /** Publishes {@code data} with attributes; returns the message id. */
  public String publish(String data, Map<String, String> attributes) {
    return pubsub.publish(
        fixture.topic(),
        PubsubMessage.newBuilder()
            .setData(ByteString.copyFrom(data, StandardCharsets.UTF_8))
            .putAllAttributes(attributes)
            .build());
  }

  /** Stops every worker this harness built. */
  @Override
  public void close() {
    for (Worker w : workers) {
      w.stop();
    }
  }
}
