package dev.pubsubworker.runtime.observability;

import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.typesafe.config.ConfigFactory;
import dev.pubsubworker.api.Handlers;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.api.WorkerPlugin;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.plugin.LoadedPlugin;
import dev.pubsubworker.runtime.worker.Worker;
import dev.pubsubworker.testkit.services.PubSubEmulator;
import dev.pubsubworker.testkit.services.SubscriptionFixture;
import dev.pubsubworker.testkit.services.SubscriptionSpec;
import dev.pubsubworker.testkit.services.TestServices;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Real workers with their observability on Google's Pub/Sub emulator, on a fresh topic and
 * subscription (the pattern of the e2e package's {@code WorkerHarness}, plus metrics and health
 * wired the way {@code run} wires them). The HTTP server binds an OS-chosen port on 127.0.0.1.
 * Everything started is stopped on close.
 */
final class EmulatorWorkers implements AutoCloseable {

  final PubSubEmulator pubsub = TestServices.pubsub();
  final SubscriptionFixture fixture;
  private final List<Worker> workers = new ArrayList<>();
  private final List<Observability> observabilities = new ArrayList<>();

  EmulatorWorkers(SubscriptionSpec spec) {
    fixture = pubsub.createSubscription(spec);
  }

  /** The settings of a worker whose subscription {@code test} runs handler {@code test}. */
  WorkerConfig config(String subscriptionSettings, String extra) {
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

  /** Metrics and health for {@code config}, serving on an OS-chosen port of 127.0.0.1. */
  Observability observability(WorkerConfig config) {
    Observability o = Observability.create(config, new InetSocketAddress("127.0.0.1", 0));
    observabilities.add(o);
    return o;
  }

  /** Builds (without starting) a worker observed by {@code observability}. */
  Worker create(WorkerConfig config, MessageHandler handler, Observability observability) {
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
            observability.guardListeners(),
            observability.dispatchListeners(),
            config.logging().keyFormat().renderer());
    workers.add(worker);
    return worker;
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
    for (Observability o : observabilities) {
      o.close();
    }
  }
}
