package dev.pubsubworker.runtime.e2e;

import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.typesafe.config.ConfigFactory;
import dev.pubsubworker.api.Handlers;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.api.WorkerPlugin;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.plugin.LoadedPlugin;
import dev.pubsubworker.runtime.pubsub.DispatchListener;
import dev.pubsubworker.runtime.worker.Worker;
import dev.pubsubworker.testkit.services.PubSubEmulator;
import dev.pubsubworker.testkit.services.SubscriptionFixture;
import dev.pubsubworker.testkit.services.SubscriptionSpec;
import dev.pubsubworker.testkit.services.TestServices;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * Runs real workers against Google's Pub/Sub emulator on a fresh topic and subscription: builds the
 * HOCON a deployment would write, installs the test's handler as a plugin, and stops every worker
 * at the end.
 */
final class WorkerHarness implements AutoCloseable {

  final PubSubEmulator pubsub = TestServices.pubsub();
  final SubscriptionFixture fixture;
  private final List<Worker> workers = new ArrayList<>();

  WorkerHarness(SubscriptionSpec spec) {
    fixture = pubsub.createSubscription(spec);
  }

  /** The HOCON of a worker on this harness's subscription, with extra settings appended. */
  String config(String subscriptionSettings, String extra) {
    return """
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
  }

  /** Builds (without starting) a worker whose {@code test} handler is {@code handler}. */
  Worker create(
      String subscriptionSettings,
      String extra,
      MessageHandler handler,
      List<DispatchListener> listeners) {
    WorkerConfig config =
        WorkerConfig.load(
            ConfigFactory.parseString(config(subscriptionSettings, extra))
                .withFallback(ConfigFactory.defaultReference())
                .resolve());
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
        Worker.create(
            config,
            List.of(new LoadedPlugin(plugin, "test", ConfigFactory.empty())),
            List.of(),
            listeners,
            UnaryOperator.identity());
    workers.add(worker);
    return worker;
  }

  /** Builds and starts a worker. */
  Worker start(String subscriptionSettings, MessageHandler handler) {
    Worker w = create(subscriptionSettings, "", handler, List.of());
    w.start();
    return w;
  }

  /** Publishes {@code data} with attributes; returns the message id. */
  String publish(String data, Map<String, String> attributes) {
    return pubsub.publish(
        fixture.topic(),
        PubsubMessage.newBuilder()
            .setData(ByteString.copyFrom(data, StandardCharsets.UTF_8))
            .putAllAttributes(attributes)
            .build());
  }

  @Override
  public void close() {
    for (Worker w : workers) {
      w.stop();
    }
  }
}
