package dev.pubsubworker.bench;

import com.google.api.core.ApiFuture;
import com.google.api.gax.core.NoCredentialsProvider;
import com.google.api.gax.grpc.GrpcTransportChannel;
import com.google.api.gax.rpc.FixedTransportChannelProvider;
import com.google.api.gax.rpc.TransportChannelProvider;
import com.google.cloud.pubsub.v1.MessageReceiver;
import com.google.cloud.pubsub.v1.Publisher;
import com.google.cloud.pubsub.v1.Subscriber;
import com.google.cloud.pubsub.v1.SubscriptionAdminClient;
import com.google.cloud.pubsub.v1.SubscriptionAdminSettings;
import com.google.cloud.pubsub.v1.TopicAdminClient;
import com.google.cloud.pubsub.v1.TopicAdminSettings;
import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.Subscription;
import com.google.pubsub.v1.SubscriptionName;
import com.google.pubsub.v1.TopicName;
import dev.pubsubworker.embedded.EmbeddedPubSub;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Drains the same backlog through a bare {@link Subscriber} (default flow control, a receiver that
 * only acks) from the embedded Pub/Sub server and from Google's emulator, in interleaved rounds,
 * and prints min / median / max messages per second for each and the ratio of the medians.
 * Publishing the backlog is not timed; the clock runs from {@code startAsync()} until every message
 * has reached the receiver.
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar dev.pubsubworker.bench.PubSubDrainBenchmark \
 *     [--messages 20000] [--rounds 5] [--emulator HOST:PORT]
 * </pre>
 *
 * <p>The emulator is {@code --emulator} or {@code PUBSUB_EMULATOR_HOST}; without either only the
 * embedded server is measured.
 */
public final class PubSubDrainBenchmark {

  private static final String PROJECT = "bench-project";

  private PubSubDrainBenchmark() {}

  /** Runs the benchmark; see the class comment. */
  @Command(
      name = "PubSubDrainBenchmark",
      description = "Drain rate of the embedded server beside Google's emulator.")
  static final class Options {
    @picocli.CommandLine.Mixin BenchOptions.Help help;

    @Option(names = "--messages", description = "Messages per drain (default 20000).")
    int messages = 20_000;

    @Option(names = "--rounds", description = "Counted rounds, after one warm-up (default 5).")
    int rounds = 5;

    @Option(
        names = "--emulator",
        description = "Google's emulator as HOST:PORT (default: PUBSUB_EMULATOR_HOST).")
    String emulator = System.getenv("PUBSUB_EMULATOR_HOST");
  }

  public static void main(String[] args) throws Exception {
    Options o = BenchOptions.parseOrExit(new Options(), args);
    int messages = o.messages;
    int rounds = o.rounds;
    String emulator = o.emulator;
    Map<String, List<Double>> rates = new LinkedHashMap<>();
    try (EmbeddedPubSub embedded = EmbeddedPubSub.start()) {
      Map<String, String> targets = new LinkedHashMap<>();
      targets.put("embedded", embedded.hostPort());
      if (emulator != null && !emulator.isBlank()) {
        targets.put("emulator", emulator);
      } else {
        System.out.println(
            "no --emulator or PUBSUB_EMULATOR_HOST: measuring the embedded server only");
      }
      for (int round = 1; round <= rounds + 1; round++) {
        for (Map.Entry<String, String> target : targets.entrySet()) {
          double rate = drain(target.getValue(), messages);
          // Round 0 warms both JVM paths up and is not counted.
          boolean warmUp = round == 1;
          System.out.printf(
              Locale.ROOT,
              "%s %-8s %,10.0f msg/s%n",
              warmUp ? "warm-up " : "round " + (round - 1),
              target.getKey(),
              rate);
          if (!warmUp) {
            rates.computeIfAbsent(target.getKey(), k -> new ArrayList<>()).add(rate);
          }
        }
      }
    }
    System.out.printf(Locale.ROOT, "%n%d messages, %d rounds, msg/s%n", messages, rounds);
    System.out.printf(Locale.ROOT, "%-8s %10s %10s %10s%n", "server", "min", "median", "max");
    for (Map.Entry<String, List<Double>> entry : rates.entrySet()) {
      List<Double> sorted = new ArrayList<>(entry.getValue());
      Collections.sort(sorted);
      System.out.printf(
          Locale.ROOT,
          "%-8s %,10.0f %,10.0f %,10.0f%n",
          entry.getKey(),
          sorted.get(0),
          median(sorted),
          sorted.get(sorted.size() - 1));
    }
    if (rates.size() == 2) {
      System.out.printf(
          Locale.ROOT,
          "embedded / emulator (medians): %.2f%n",
          median(sorted(rates.get("embedded"))) / median(sorted(rates.get("emulator"))));
    }
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

  /** Publishes {@code count} messages to a fresh topic and times a Subscriber draining them. */
  private static double drain(String hostPort, int count) throws Exception {
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
      TopicName topic = TopicName.of(PROJECT, "drain-" + suffix);
      SubscriptionName subscription = SubscriptionName.of(PROJECT, "drain-" + suffix);
      topics.createTopic(topic);
      subscriptions.createSubscription(
          Subscription.newBuilder()
              .setName(subscription.toString())
              .setTopic(topic.toString())
              .setAckDeadlineSeconds(60)
              .build());
      publish(topic, channels, count);

      Set<String> seen = ConcurrentHashMap.newKeySet();
      CountDownLatch done = new CountDownLatch(1);
      Subscriber subscriber =
          Subscriber.newBuilder(
                  subscription.toString(),
                  (MessageReceiver)
                      (message, consumer) -> {
                        consumer.ack();
                        if (seen.add(message.getMessageId()) && seen.size() == count) {
                          done.countDown();
                        }
                      })
              .setChannelProvider(channels)
              .setCredentialsProvider(NoCredentialsProvider.create())
              .build();
      long start = System.nanoTime();
      subscriber.startAsync().awaitRunning();
      boolean drained = done.await(10, TimeUnit.MINUTES);
      long elapsed = System.nanoTime() - start;
      subscriber.stopAsync().awaitTerminated(1, TimeUnit.MINUTES);
      subscriptions.deleteSubscription(subscription);
      topics.deleteTopic(topic);
      if (!drained) {
        throw new IllegalStateException(
            hostPort + ": only " + seen.size() + " of " + count + " messages within 10 minutes");
      }
      return count / (elapsed / 1e9);
    } finally {
      channel.shutdownNow();
      channel.awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  private static void publish(TopicName topic, TransportChannelProvider channels, int count)
      throws Exception {
    Publisher publisher =
        Publisher.newBuilder(topic)
            .setChannelProvider(channels)
            .setCredentialsProvider(NoCredentialsProvider.create())
            .build();
    try {
      List<ApiFuture<String>> ids = new ArrayList<>(count);
      for (int i = 0; i < count; i++) {
        ids.add(
            publisher.publish(
                PubsubMessage.newBuilder()
                    .setData(ByteString.copyFromUtf8("message " + i))
                    .build()));
      }
      for (ApiFuture<String> id : ids) {
        id.get(1, TimeUnit.MINUTES);
      }
    } finally {
      publisher.shutdown();
      publisher.awaitTermination(1, TimeUnit.MINUTES);
    }
  }
}
