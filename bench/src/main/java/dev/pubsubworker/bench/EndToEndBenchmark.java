package dev.pubsubworker.bench;

import com.google.api.core.ApiFuture;
import com.google.api.gax.batching.FlowControlSettings;
import com.google.api.gax.batching.FlowController;
import com.google.api.gax.core.InstantiatingExecutorProvider;
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
import com.typesafe.config.ConfigFactory;
import com.zaxxer.hikari.HikariDataSource;
import dev.pubsubworker.api.Handlers;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.api.WorkerPlugin;
import dev.pubsubworker.embedded.EmbeddedPubSub;
import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.observability.Observability;
import dev.pubsubworker.runtime.plugin.LoadedPlugin;
import dev.pubsubworker.runtime.pubsub.DispatchListener;
import dev.pubsubworker.runtime.worker.Worker;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.micrometer.core.instrument.MeterRegistry;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The same backlog drained from Pub/Sub by a bare {@link Subscriber} that only acks and by the
 * worker with a no-op handler (guard {@code none}; guard {@code lock} on the in-memory store, on
 * Redis and on PostgreSQL), in interleaved rounds, with the same flow control (1,000 messages, 100
 * MiB, block), the same number of streaming pulls and the same handler threads per stream.
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar dev.pubsubworker.bench.EndToEndBenchmark \
 *     [--messages 50000] [--rounds 3] [--warm-up 100000] [--streams 4] [--threads 5] \
 *     [--variants bare,none,in-memory,redis,postgresql] [--pubsub HOST:PORT] [--cpu-by-thread]
 * </pre>
 *
 * <p>Each round publishes the backlog once to a fresh topic with one fresh subscription per variant
 * (publishing is not timed), then drains the variants one after the other in the order given. A
 * first warm-up round ({@code --warm-up} messages, twice the backlog unless given) is not counted:
 * the store paths of a fresh JVM take some 100,000 messages to reach their steady rate (JIT, heap
 * sizing), and the figures are meant for a long-running worker. A variant's clock runs from its
 * first delivery until its last message is settled (acked by the bare subscriber; settled by the
 * worker's dispatcher, after the guard's DONE write), so start-up and shutdown are left out of
 * both. CPU is the process's CPU time over the same span, divided by the messages.
 *
 * <p>Without {@code --pubsub} the embedded Pub/Sub server runs inside this JVM, so its CPU is
 * counted in every variant alike; with {@code --pubsub} (a standalone {@code
 * pubsub-embedded/target/pubsub-embedded.jar}) only the client side is counted. The worker runs as
 * {@code run} builds it: {@link Observability} metrics (HTTP server off) and default guard settings
 * (lease 30 s, heartbeat on), with a 10-minute TTL and a key namespace per round so that no round
 * sees another's records. Redis comes from {@code REDIS_URL}, PostgreSQL from {@code POSTGRES_URL}
 * ({@link Endpoints}); the benchmark's Redis keys and SQL table are deleted at the end.
 */
public final class EndToEndBenchmark {

  private static final String PROJECT = "bench-project";

  /** What drains the backlog. */
  enum Variant {
    BARE("bare"),
    NONE("none"),
    IN_MEMORY("in-memory"),
    REDIS("redis"),
    POSTGRESQL("postgresql");

    final String label;

    Variant(String label) {
      this.label = label;
    }

    static Variant of(String label) {
      for (Variant v : values()) {
        if (v.label.equals(label)) {
          return v;
        }
      }
      throw new IllegalArgumentException(
          "unknown variant '" + label + "' (expected bare, none, in-memory, redis, postgresql)");
    }
  }

  private final int streams;
  private final int threads;
  private boolean cpuByThread;
  private boolean countHandOffs;
  private boolean handOffStacks;
  private final String hostPort;
  private final Endpoints endpoints;
  private final String run = UUID.randomUUID().toString().substring(0, 8);
  private final TransportChannelProvider channels;
  private final TopicAdminClient topics;
  private final SubscriptionAdminClient subscriptions;

  private EndToEndBenchmark(
      int streams, int threads, String hostPort, ManagedChannel channel, Endpoints endpoints)
      throws java.io.IOException {
    this.streams = streams;
    this.threads = threads;
    this.hostPort = hostPort;
    this.endpoints = endpoints;
    this.channels = FixedTransportChannelProvider.create(GrpcTransportChannel.create(channel));
    this.topics =
        TopicAdminClient.create(
            TopicAdminSettings.newBuilder()
                .setTransportChannelProvider(channels)
                .setCredentialsProvider(NoCredentialsProvider.create())
                .build());
    this.subscriptions =
        SubscriptionAdminClient.create(
            SubscriptionAdminSettings.newBuilder()
                .setTransportChannelProvider(channels)
                .setCredentialsProvider(NoCredentialsProvider.create())
                .build());
  }

  /** Runs the benchmark; see the class comment. */
  @Command(
      name = "EndToEndBenchmark",
      description = "The worker end to end against a bare subscriber, by lock store.")
  static final class Options {
    @picocli.CommandLine.Mixin BenchOptions.Help help;

    @Option(names = "--messages", description = "Messages per round (default 50000).")
    int messages = 50_000;

    @Option(names = "--warm-up", description = "Warm-up messages (default twice --messages).")
    Integer warmUp;

    @Option(names = "--rounds", description = "Interleaved rounds (default 3).")
    int rounds = 3;

    @Option(names = "--streams", description = "Streaming pulls per subscriber (default 4).")
    int streams = 4;

    @Option(names = "--threads", description = "Handler threads per subscriber (default 5).")
    int threads = 5;

    @Option(
        names = "--pubsub",
        description = "A Pub/Sub server as HOST:PORT (default: one embedded in this JVM).")
    String pubsub;

    @Option(names = "--cpu-by-thread", description = "Print CPU time by thread group.")
    boolean cpuByThread;

    @Option(
        names = "--count-hand-offs",
        description =
            "Count thread hand-offs (parks and monitor waits, with JFR) per message, by thread"
                + " group; slows the run, so its rates are not comparable with a run without it.")
    boolean countHandOffs;

    @Option(
        names = "--hand-off-stacks",
        description =
            "With --count-hand-offs, also count them by the code that waited (the first two"
                + " frames outside the JDK).")
    boolean handOffStacks;

    @picocli.CommandLine.Mixin PrivateServers.Option servers = new PrivateServers.Option();

    @Option(
        names = "--variants",
        split = ",",
        converter = VariantConverter.class,
        description = "Which to run (default all): bare, none, in-memory, redis, postgresql.")
    List<Variant> variants = List.of(Variant.values());
  }

  /** {@link Variant#of}, for picocli. */
  static final class VariantConverter implements picocli.CommandLine.ITypeConverter<Variant> {
    @Override
    public Variant convert(String value) {
      return Variant.of(value);
    }
  }

  public static void main(String[] args) throws Exception {
    Options o = BenchOptions.parseOrExit(new Options(), args);
    int messages = o.messages;
    Integer warmUp = o.warmUp;
    int rounds = o.rounds;
    int streams = o.streams;
    int threads = o.threads;
    String pubsub = o.pubsub;
    boolean cpuByThread = o.cpuByThread;
    List<Variant> variants = o.variants;
    int warmUpMessages = warmUp != null ? warmUp : 2 * messages;
    EmbeddedPubSub embedded = pubsub == null ? EmbeddedPubSub.start() : null;
    String hostPort = pubsub == null ? embedded.hostPort() : pubsub;
    ManagedChannel channel =
        ManagedChannelBuilder.forTarget(hostPort)
            .usePlaintext()
            .maxInboundMessageSize(20 << 20)
            .build();
    PrivateServers servers =
        o.servers.start(variants.contains(Variant.REDIS), variants.contains(Variant.POSTGRESQL));
    EndToEndBenchmark bench =
        new EndToEndBenchmark(
            streams, threads, hostPort, channel, servers.endpoints(Endpoints.fromEnvironment()));
    bench.cpuByThread = cpuByThread;
    bench.countHandOffs = o.countHandOffs || o.handOffStacks;
    bench.handOffStacks = o.handOffStacks;
    try {
      System.out.printf(
          Locale.ROOT,
          "%,d messages, %d rounds (+1 warm-up of %,d), %d streams x %d handler threads,"
              + " Pub/Sub %s, load average %s%n",
          messages,
          rounds,
          warmUpMessages,
          streams,
          threads,
          pubsub == null ? "embedded in this JVM (its CPU is counted too)" : pubsub,
          Samples.loadAverage());
      bench.run(variants, messages, warmUpMessages, rounds);
    } finally {
      bench.cleanUp(variants);
      bench.topics.close();
      bench.subscriptions.close();
      channel.shutdownNow();
      channel.awaitTermination(10, TimeUnit.SECONDS);
      if (embedded != null) {
        embedded.close();
      }
      servers.close();
    }
  }

  private void run(List<Variant> variants, int messages, int warmUp, int rounds) throws Exception {
    Samples rates = new Samples();
    Samples cpu = new Samples();
    for (int round = 0; round <= rounds; round++) {
      int count = round == 0 ? warmUp : messages;
      String suffix = run + "-" + round;
      TopicName topic = TopicName.of(PROJECT, "e2e-" + suffix);
      topics.createTopic(topic);
      Map<Variant, SubscriptionName> subs = new EnumMap<>(Variant.class);
      for (Variant v : variants) {
        SubscriptionName name = SubscriptionName.of(PROJECT, "e2e-" + suffix + "-" + v.label);
        subscriptions.createSubscription(
            Subscription.newBuilder()
                .setName(name.toString())
                .setTopic(topic.toString())
                .setAckDeadlineSeconds(60)
                .build());
        subs.put(v, name);
      }
      publish(topic, count);
      for (Variant v : variants) {
        // Leave the garbage of publishing and of the previous variant out of this one's span.
        System.gc();
        Meter meter = new Meter(count, cpuByThread);
        String storeCalls = "";
        ParkCounter parks = countHandOffs ? ParkCounter.start(handOffStacks) : null;
        if (v == Variant.BARE) {
          drainBare(subs.get(v), meter);
        } else {
          storeCalls = drainWorker(subs.get(v), v, suffix, meter);
        }
        String handOffs = parks == null ? "" : ParkCounter.report(parks.stop(), count);
        subscriptions.deleteSubscription(subs.get(v));
        double rate = meter.rate();
        double cpuMicros = meter.cpuMicrosPerMessage();
        System.out.printf(
            Locale.ROOT,
            "%-9s %-11s %,9.0f msg/s %8.1f us CPU/msg%s%n",
            round == 0 ? "warm-up" : "round " + round,
            v.label,
            rate,
            cpuMicros,
            meter.otherOutcomes());
        System.out.print(storeCalls);
        System.out.print(handOffs);
        if (cpuByThread) {
          System.out.print(meter.cpuByThread());
        }
        if (round > 0) {
          rates.add(v.label, rate);
          cpu.add(v.label, cpuMicros);
        }
      }
      topics.deleteTopic(topic);
    }
    System.out.printf(
        Locale.ROOT,
        "%n%,d messages, %d rounds, load average %s at the end%n",
        messages,
        rounds,
        Samples.loadAverage());
    System.out.printf(
        Locale.ROOT,
        "%-11s %9s %9s %9s %8s %11s %8s%n",
        "variant",
        "min",
        "median",
        "max",
        "x bare",
        "CPU us/msg",
        "x bare");
    String bare = Variant.BARE.label;
    for (String v : rates.variants()) {
      System.out.printf(
          Locale.ROOT,
          "%-11s %,9.0f %,9.0f %,9.0f %8s %11.1f %8s%n",
          v,
          rates.min(v),
          rates.median(v),
          rates.max(v),
          rates.has(bare)
              ? String.format(Locale.ROOT, "%.2f", rates.median(v) / rates.median(bare))
              : "-",
          cpu.median(v),
          cpu.has(bare)
              ? String.format(Locale.ROOT, "%.2f", cpu.median(v) / cpu.median(bare))
              : "-");
    }
    System.out.println("(msg/s min/median/max over the rounds; ratios of medians to bare)");
  }

  /** Counts settled messages and notes the clock and CPU at the first delivery and the last. */
  private static final class Meter implements DispatchListener {
    private final int target;
    private final AtomicBoolean started = new AtomicBoolean();
    private final AtomicInteger settled = new AtomicInteger();
    private final Map<Outcome, AtomicInteger> outcomes = new EnumMap<>(Outcome.class);
    private final CountDownLatch done = new CountDownLatch(1);
    private volatile long firstNanos;
    private volatile long firstCpu;
    private volatile long lastNanos;
    private volatile long lastCpu;

    private final boolean byThread;
    private volatile Map<String, Long> firstThreads = Map.of();
    private volatile Map<String, Long> lastThreads = Map.of();

    Meter(int target, boolean byThread) {
      this.target = target;
      this.byThread = byThread;
      for (Outcome o : Outcome.values()) {
        outcomes.put(o, new AtomicInteger());
      }
    }

    @Override
    public void received(String subscription) {
      arrived();
    }

    @Override
    public void settled(String subscription, Outcome outcome, Duration handlerTime) {
      outcomes.get(outcome).incrementAndGet();
      if (outcome == Outcome.PROCESSED || outcome == Outcome.UNGUARDED) {
        finished();
      }
    }

    void arrived() {
      if (!started.get() && started.compareAndSet(false, true)) {
        firstNanos = System.nanoTime();
        firstCpu = Samples.processCpuNanos();
        if (byThread) {
          firstThreads = threadCpu();
        }
      }
    }

    void finished() {
      if (settled.incrementAndGet() == target) {
        lastNanos = System.nanoTime();
        lastCpu = Samples.processCpuNanos();
        if (byThread) {
          lastThreads = threadCpu();
        }
        done.countDown();
      }
    }

    void await(String what) throws InterruptedException {
      if (!done.await(10, TimeUnit.MINUTES)) {
        throw new IllegalStateException(
            what + ": only " + settled.get() + " of " + target + " messages within 10 minutes");
      }
    }

    double rate() {
      return target / ((lastNanos - firstNanos) / 1e9);
    }

    double cpuMicrosPerMessage() {
      return (lastCpu - firstCpu) / 1e3 / target;
    }

    /** CPU nanoseconds of the live threads, summed by name with its digits removed. */
    private static Map<String, Long> threadCpu() {
      java.lang.management.ThreadMXBean mx =
          java.lang.management.ManagementFactory.getThreadMXBean();
      Map<String, Long> byGroup = new java.util.HashMap<>();
      for (java.lang.management.ThreadInfo info : mx.getThreadInfo(mx.getAllThreadIds())) {
        if (info != null) {
          long cpu = mx.getThreadCpuTime(info.getThreadId());
          if (cpu > 0) {
            byGroup.merge(info.getThreadName().replaceAll("[0-9]+", "N"), cpu, Long::sum);
          }
        }
      }
      return byGroup;
    }

    /**
     * The span's CPU per message by thread group (threads that ended within the span are missed),
     * the largest first, and the rest of the process's CPU (JIT compilers, GC, the VM, and those).
     */
    String cpuByThread() {
      Map<String, Long> delta = new java.util.TreeMap<>();
      lastThreads.forEach(
          (group, cpu) -> delta.put(group, cpu - firstThreads.getOrDefault(group, 0L)));
      long threads = delta.values().stream().mapToLong(Long::longValue).sum();
      StringBuilder s = new StringBuilder();
      delta.entrySet().stream()
          .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
          .limit(10)
          .forEach(
              e ->
                  s.append(
                      String.format(
                          Locale.ROOT,
                          "            %8.1f us/msg  %s%n",
                          e.getValue() / 1e3 / target,
                          e.getKey())));
      s.append(
          String.format(
              Locale.ROOT,
              "            %8.1f us/msg  (not in live Java threads: JIT, GC, VM)%n",
              ((lastCpu - firstCpu) - threads) / 1e3 / target));
      return s.toString();
    }

    String otherOutcomes() {
      StringBuilder s = new StringBuilder();
      outcomes.forEach(
          (o, n) -> {
            if (o != Outcome.PROCESSED && o != Outcome.UNGUARDED && n.get() > 0) {
              s.append(' ').append(o).append('=').append(n.get());
            }
          });
      return s.length() == 0 ? "" : "  (also settled:" + s + ")";
    }
  }

  private FlowControlSettings flowControl() {
    // The worker's defaults: pubsub-worker.subscription-defaults.flow-control.
    return FlowControlSettings.newBuilder()
        .setMaxOutstandingElementCount(1000L)
        .setMaxOutstandingRequestBytes(100L << 20)
        .setLimitExceededBehavior(FlowController.LimitExceededBehavior.Block)
        .build();
  }

  private void drainBare(SubscriptionName subscription, Meter meter) throws Exception {
    Subscriber subscriber =
        Subscriber.newBuilder(
                subscription.toString(),
                (MessageReceiver)
                    (message, consumer) -> {
                      meter.arrived();
                      consumer.ack();
                      meter.finished();
                    })
            .setChannelProvider(channels)
            .setCredentialsProvider(NoCredentialsProvider.create())
            .setFlowControlSettings(flowControl())
            .setParallelPullCount(streams)
            // Like the worker's handler pools: one executor of `threads` threads per stream.
            .setExecutorProvider(
                InstantiatingExecutorProvider.newBuilder().setExecutorThreadCount(threads).build())
            // Like the worker's defaults (max-ack-extension, max-ack-extension-per-call).
            .setMaxAckExtensionPeriodDuration(Duration.ofMinutes(60))
            .setMaxDurationPerAckExtensionDuration(Duration.ofSeconds(60))
            .build();
    subscriber.startAsync().awaitRunning();
    try {
      meter.await("bare subscriber");
    } finally {
      subscriber.stopAsync().awaitTerminated(1, TimeUnit.MINUTES);
    }
  }

  /** Drains with the worker; returns its account of its store calls ({@link #groupCommit}). */
  private String drainWorker(SubscriptionName subscription, Variant v, String suffix, Meter meter)
      throws Exception {
    String store =
        switch (v) {
          case REDIS ->
              """
              type = redis
              redis { uri = "%s", key-prefix = "%s" }
              """
                  .formatted(endpoints.redisUri(), redisPrefix());
          case POSTGRESQL ->
              """
              type = sql
              sql {
                jdbc-url = "%s", user = "%s", password = "%s", table = "%s"
                maximum-pool-size = %d
              }
              """
                  .formatted(
                      endpoints.jdbcUrl(),
                      endpoints.jdbcUser(),
                      endpoints.jdbcPassword(),
                      table(),
                      streams * threads);
          default -> "type = in-memory";
        };
    String hocon =
        """
        pubsub-worker {
          project-id = "%s"
          pubsub-emulator-host = "%s"
          shutdown-grace = 10s
          lock-store { %s }
          observability { http-port = 0 }
          subscriptions {
            bench {
              name = "%s"
              handler = "noop"
              guard = %s
              key-namespace = "%s"
              ttl = 10m
              exactly-once = off
              parallel-pull-count = %d
              executor-threads = %d
            }
          }
        }
        """
            .formatted(
                PROJECT,
                hostPort,
                store,
                subscription.toString(),
                v == Variant.NONE ? "none" : "lock",
                suffix,
                streams,
                threads);
    WorkerConfig config =
        WorkerConfig.load(
            ConfigFactory.parseString(hocon)
                .withFallback(ConfigFactory.defaultReference())
                .resolve());
    MessageHandler noop = (message, context) -> {};
    WorkerPlugin plugin =
        new WorkerPlugin() {
          @Override
          public String name() {
            return "bench";
          }

          @Override
          public com.google.inject.Module module(com.typesafe.config.Config c) {
            return binder -> Handlers.bind(binder, "noop").toInstance(noop);
          }
        };
    try (Observability observability = Observability.create(config)) {
      List<DispatchListener> listeners = new ArrayList<>(observability.dispatchListeners());
      listeners.add(meter);
      Worker worker =
          Worker.newBuilder(config)
              .plugins(List.of(new LoadedPlugin(plugin, "bench", ConfigFactory.empty())))
              .guardListeners(observability::guardListeners)
              .dispatchListeners(listeners)
              .build();
      observability.start(worker);
      try {
        worker.start();
        meter.await("worker, " + v.label);
      } finally {
        worker.stop();
      }
      return groupCommit(observability.registry(), v);
    }
  }

  /**
   * The worker's own account of its store calls, one line: per verb, calls, the batches they went
   * in, the share of calls that went in one, and round trips per call ({@link StoreCalls}).
   */
  private static String groupCommit(MeterRegistry registry, Variant v) {
    if (v == Variant.NONE) {
      return "";
    }
    StringBuilder line = new StringBuilder("            store calls:");
    for (String verb : StoreCalls.VERBS) {
      line.append("  ").append(StoreCalls.read(registry, verb).describe(verb));
    }
    return line.append(System.lineSeparator()).toString();
  }

  private void publish(TopicName topic, int count) throws Exception {
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
                    .putAttributes("n", Integer.toString(i))
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

  private String redisPrefix() {
    return "pwbench-e2e:" + run + ":";
  }

  private String table() {
    return "bench_e2e_" + run;
  }

  private void cleanUp(List<Variant> variants) throws Exception {
    if (variants.contains(Variant.REDIS)) {
      RedisKeys.deleteByPrefix(endpoints.redisUri(), redisPrefix());
    }
    if (variants.contains(Variant.POSTGRESQL)) {
      try (HikariDataSource ds = endpoints.pool("e2e-cleanup", endpoints.jdbcUrl(), 1);
          Connection c = ds.getConnection();
          Statement st = c.createStatement()) {
        st.execute("DROP TABLE IF EXISTS " + table());
      }
    }
  }
}
