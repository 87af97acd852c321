package dev.pubsubworker.bench;

import com.google.api.gax.core.NoCredentialsProvider;
import com.google.api.gax.grpc.GrpcTransportChannel;
import com.google.api.gax.rpc.FixedTransportChannelProvider;
import com.google.api.gax.rpc.TransportChannelProvider;
import com.google.cloud.pubsub.v1.SubscriptionAdminClient;
import com.google.cloud.pubsub.v1.SubscriptionAdminSettings;
import com.google.cloud.pubsub.v1.TopicAdminClient;
import com.google.cloud.pubsub.v1.TopicAdminSettings;
import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.RetryPolicy;
import com.google.pubsub.v1.Subscription;
import com.google.pubsub.v1.SubscriptionName;
import com.google.pubsub.v1.TopicName;
import com.typesafe.config.ConfigFactory;
import dev.pubsubworker.api.Handlers;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.api.WorkerPlugin;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.embedded.EmbeddedPubSub;
import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.plugin.LoadedPlugin;
import dev.pubsubworker.runtime.pubsub.DispatchListener;
import dev.pubsubworker.runtime.worker.Worker;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Parking against nacking (issue 15): the real worker on the embedded Pub/Sub server (subscription
 * retry policy 1 s to 10 s, in-memory lock store) waits for held keys, in interleaved rounds of
 * {@code in-progress-max-wait = 0s} ("before": a held key is nacked at once) and the default
 * ("after": the delivery is parked). Two scenarios per round:
 *
 * <ul>
 *   <li><b>crashed</b>: a claim taken through the backend and never completed (lease {@code
 *       --lease}, default 3 s), then {@code --waiters} deliveries of that key;
 *   <li><b>live</b>: {@code --keys} keys, each published twice at once, whose handler takes {@code
 *       --work} (default 1 s), so the second copy arrives while the worker holds the key.
 * </ul>
 *
 * For each it prints delivery attempts (deliveries that reached the dispatcher), nacks, and the
 * time from publishing until each message was acked (min / median / max), then the medians over the
 * rounds and the before/after ratios.
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar dev.pubsubworker.bench.ParkingBenchmark \
 *     [--rounds 3] [--waiters 20] [--keys 10] [--lease 3s] [--work 1s]
 * </pre>
 */
public final class ParkingBenchmark {

  private static final String PROJECT = "bench-project";

  private ParkingBenchmark() {}

  /** One scenario's run: delivery attempts, nacks, and each message's time to ack, in ms. */
  private record Run(int deliveries, int nacks, List<Double> ackMillis) {
    double median() {
      return ParkingBenchmark.median(sorted(ackMillis));
    }
  }

  /** Runs the benchmark; see the class comment. */
  public static void main(String[] args) throws Exception {
    int rounds = 3;
    int waiters = 20;
    int keys = 10;
    Duration lease = Duration.ofSeconds(3);
    Duration work = Duration.ofSeconds(1);
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--rounds" -> rounds = Integer.parseInt(args[++i]);
        case "--waiters" -> waiters = Integer.parseInt(args[++i]);
        case "--keys" -> keys = Integer.parseInt(args[++i]);
        case "--lease" -> lease = Duration.parse("PT" + args[++i].toUpperCase(Locale.ROOT));
        case "--work" -> work = Duration.parse("PT" + args[++i].toUpperCase(Locale.ROOT));
        default -> {
          System.err.println(
              "unknown argument '"
                  + args[i]
                  + "' (expected --rounds R, --waiters N, --keys K, --lease 3s, --work 1s)");
          System.exit(2);
        }
      }
    }
    Map<String, List<Run>> runs = new LinkedHashMap<>();
    try (EmbeddedPubSub pubsub = EmbeddedPubSub.start()) {
      for (int round = 1; round <= rounds; round++) {
        for (String mode : List.of("before", "after")) {
          String wait = mode.equals("before") ? "0s" : "2m";
          Run crashed = crashed(pubsub.hostPort(), wait, waiters, lease);
          Run live = live(pubsub.hostPort(), wait, keys, work);
          print("round " + round, mode, "crashed", crashed);
          print("round " + round, mode, "live", live);
          runs.computeIfAbsent(mode + " crashed", k -> new ArrayList<>()).add(crashed);
          runs.computeIfAbsent(mode + " live", k -> new ArrayList<>()).add(live);
        }
      }
    }
    System.out.printf(
        Locale.ROOT,
        "%n%d rounds; crashed: %d waiters, lease %s; live: %d keys x 2 copies, work %s%n",
        rounds,
        waiters,
        lease,
        keys,
        work);
    System.out.printf(
        Locale.ROOT,
        "%-16s %12s %8s %12s %12s %12s%n",
        "median of",
        "deliveries",
        "nacks",
        "ack min ms",
        "ack med ms",
        "ack max ms");
    for (Map.Entry<String, List<Run>> e : runs.entrySet()) {
      List<Run> rs = e.getValue();
      System.out.printf(
          Locale.ROOT,
          "%-16s %12.0f %8.0f %12.0f %12.0f %12.0f%n",
          e.getKey(),
          median(sorted(rs.stream().map(r -> (double) r.deliveries()).toList())),
          median(sorted(rs.stream().map(r -> (double) r.nacks()).toList())),
          median(sorted(rs.stream().map(r -> Collections.min(r.ackMillis())).toList())),
          median(sorted(rs.stream().map(Run::median).toList())),
          median(sorted(rs.stream().map(r -> Collections.max(r.ackMillis())).toList())));
    }
    for (String scenario : List.of("crashed", "live")) {
      List<Run> before = runs.get("before " + scenario);
      List<Run> after = runs.get("after " + scenario);
      System.out.printf(
          Locale.ROOT,
          "%s: redeliveries before/after %.0f/%.0f; median time to ack before/after %.2f%n",
          scenario,
          median(sorted(before.stream().map(r -> (double) r.nacks()).toList())),
          median(sorted(after.stream().map(r -> (double) r.nacks()).toList())),
          median(sorted(before.stream().map(Run::median).toList()))
              / median(sorted(after.stream().map(Run::median).toList())));
    }
  }

  /** A claim that is never completed, then {@code waiters} deliveries of its key. */
  private static Run crashed(String hostPort, String wait, int waiters, Duration lease)
      throws Exception {
    MessageHandler handler = (m, ctx) -> {};
    return measure(
        hostPort,
        wait,
        "lease = " + lease.toMillis() + "ms",
        handler,
        worker -> {
          ClaimResult r =
              worker.backend().claim(ClaimRequest.of("bench:crashed", lease, "crashed-holder"));
          if (!(r instanceof ClaimResult.Won)) {
            throw new IllegalStateException("the crashed holder's claim was not won: " + r);
          }
        },
        publisher -> {
          for (int i = 0; i < waiters; i++) {
            publisher.publish("crashed", "waiter " + i);
          }
        },
        waiters);
  }

  /** {@code keys} keys published twice at once while their handler runs for {@code work}. */
  private static Run live(String hostPort, String wait, int keys, Duration work) throws Exception {
    MessageHandler handler = (m, ctx) -> LockSupport.parkNanos(work.toNanos());
    return measure(
        hostPort,
        wait,
        "lease = 30s",
        handler,
        worker -> {},
        publisher -> {
          for (int i = 0; i < keys; i++) {
            publisher.publish("live-" + i, "first");
            publisher.publish("live-" + i, "second");
          }
        },
        2 * keys);
  }

  private interface Setup {
    void run(Worker worker) throws Exception;
  }

  private interface Load {
    void run(Publishing publisher) throws Exception;
  }

  /** Publishes one message with key attribute {@code id}. */
  private interface Publishing {
    void publish(String id, String data);
  }

  private static Run measure(
      String hostPort,
      String wait,
      String settings,
      MessageHandler handler,
      Setup setup,
      Load load,
      int messages)
      throws Exception {
    ManagedChannel channel = ManagedChannelBuilder.forTarget(hostPort).usePlaintext().build();
    TransportChannelProvider channels =
        FixedTransportChannelProvider.create(GrpcTransportChannel.create(channel));
    try (TopicAdminClient topics =
            TopicAdminClient.create(
                TopicAdminSettings.newBuilder()
                    .setTransportChannelProvider(channels)
                    .setCredentialsProvider(NoCredentialsProvider.create())
                    .build());
        SubscriptionAdminClient subscriptions =
            SubscriptionAdminClient.create(
                SubscriptionAdminSettings.newBuilder()
                    .setTransportChannelProvider(channels)
                    .setCredentialsProvider(NoCredentialsProvider.create())
                    .build())) {
      String suffix = Long.toString(System.nanoTime());
      TopicName topic = TopicName.of(PROJECT, "park-" + suffix);
      SubscriptionName subscription = SubscriptionName.of(PROJECT, "park-" + suffix);
      topics.createTopic(topic);
      subscriptions.createSubscription(
          Subscription.newBuilder()
              .setName(subscription.toString())
              .setTopic(topic.toString())
              .setAckDeadlineSeconds(10)
              .setRetryPolicy(
                  RetryPolicy.newBuilder()
                      .setMinimumBackoff(com.google.protobuf.Duration.newBuilder().setSeconds(1))
                      .setMaximumBackoff(com.google.protobuf.Duration.newBuilder().setSeconds(10)))
              .build());
      AtomicInteger received = new AtomicInteger();
      AtomicInteger nacks = new AtomicInteger();
      List<Double> acked = new CopyOnWriteArrayList<>();
      long[] started = {0};
      DispatchListener listener =
          new DispatchListener() {
            @Override
            public void received(String s) {
              received.incrementAndGet();
            }

            @Override
            public void settled(String s, Outcome outcome, Duration handlerTime) {
              if (outcome.acked()) {
                acked.add((System.nanoTime() - started[0]) / 1e6);
              } else {
                nacks.incrementAndGet();
              }
            }
          };
      Worker worker = worker(hostPort, subscription, wait, settings, handler, listener);
      try {
        setup.run(worker);
        worker.start();
        started[0] = System.nanoTime();
        load.run(
            (id, data) ->
                topics.publish(
                    topic,
                    List.of(
                        PubsubMessage.newBuilder()
                            .setData(ByteString.copyFromUtf8(data))
                            .putAttributes("id", id)
                            .build())));
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
        while (acked.size() < messages) {
          if (System.nanoTime() > deadline) {
            throw new IllegalStateException(
                "only " + acked.size() + " of " + messages + " acked within 5 minutes");
          }
          TimeUnit.MILLISECONDS.sleep(20);
        }
      } finally {
        worker.stop();
      }
      subscriptions.deleteSubscription(subscription);
      topics.deleteTopic(topic);
      return new Run(received.get(), nacks.get(), new ArrayList<>(acked));
    } finally {
      channel.shutdownNow();
      channel.awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  private static Worker worker(
      String hostPort,
      SubscriptionName subscription,
      String wait,
      String settings,
      MessageHandler handler,
      DispatchListener listener) {
    String hocon =
        """
        pubsub-worker {
          project-id = "%s"
          pubsub-emulator-host = "%s"
          shutdown-grace = 5s
          subscriptions {
            bench {
              name = "%s"
              handler = "bench"
              key = "attribute:id"
              key-namespace = "bench"
              executor-threads = 8
              in-progress-max-wait = %s
              %s
            }
          }
        }
        """
            .formatted(PROJECT, hostPort, subscription.getSubscription(), wait, settings);
    WorkerConfig config =
        WorkerConfig.load(
            ConfigFactory.parseString(hocon)
                .withFallback(ConfigFactory.defaultReference())
                .resolve());
    WorkerPlugin plugin =
        new WorkerPlugin() {
          @Override
          public String name() {
            return "bench";
          }

          @Override
          public com.google.inject.Module module(com.typesafe.config.Config c) {
            return binder -> Handlers.bind(binder, "bench").toInstance(handler);
          }
        };
    return Worker.newBuilder(config)
        .plugins(List.of(new LoadedPlugin(plugin, "bench", ConfigFactory.empty())))
        .dispatchListeners(List.of(listener))
        .build();
  }

  private static void print(String round, String mode, String scenario, Run r) {
    List<Double> s = sorted(r.ackMillis());
    System.out.printf(
        Locale.ROOT,
        "%s %-6s %-7s deliveries %4d  nacks %4d  time to ack ms min %6.0f median %6.0f max %6.0f%n",
        round,
        mode,
        scenario,
        r.deliveries(),
        r.nacks(),
        s.get(0),
        median(s),
        s.get(s.size() - 1));
  }

  private static List<Double> sorted(List<Double> values) {
    List<Double> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    return sorted;
  }

  private static double median(List<Double> sorted) {
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }
}
