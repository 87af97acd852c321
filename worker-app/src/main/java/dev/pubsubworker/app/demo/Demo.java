package dev.pubsubworker.app.demo;

import ch.qos.logback.classic.Level;
import com.google.api.core.ApiFuture;
import com.google.cloud.pubsub.v1.Publisher;
import com.google.cloud.pubsub.v1.SubscriptionAdminClient;
import com.google.cloud.pubsub.v1.TopicAdminClient;
import com.google.inject.util.Modules;
import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.RetryPolicy;
import com.google.pubsub.v1.Subscription;
import com.google.pubsub.v1.SubscriptionName;
import com.google.pubsub.v1.TopicName;
import com.typesafe.config.ConfigFactory;
import dev.pubsubworker.api.WorkerPlugin;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.embedded.EmbeddedPubSub;
import dev.pubsubworker.emulators.CloudEmulator;
import dev.pubsubworker.emulators.CloudSdk;
import dev.pubsubworker.emulators.ManagedProcess;
import dev.pubsubworker.emulators.Probes;
import dev.pubsubworker.plugins.orders.OrderSink;
import dev.pubsubworker.plugins.orders.OrdersPlugin;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.plugin.LoadedPlugin;
import dev.pubsubworker.runtime.pubsub.PubSubConnection;
import dev.pubsubworker.runtime.worker.Worker;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code demo}: everything local — Pub/Sub (the embedded server by default, see {@link
 * DemoPubSub}), a lock store, the example orders plugin — and a load that makes exactly-once hard:
 * duplicate publishes of the same order, first placements that fail, and orders a crashed worker
 * claimed and abandoned. The real runtime processes them; the demo shows progress and then checks
 * that every order was placed exactly once.
 */
public final class Demo {

  /** The demo's outcome. */
  public enum Result {
    /** Every order placed exactly once. */
    EXACTLY_ONCE,
    /** An order was placed twice or never. */
    VIOLATED,
    /** Something the demo needs (a Pub/Sub server, an emulator, a store) is missing. */
    UNAVAILABLE
  }

  private static final Duration LEASE = Duration.ofSeconds(5);
  private static final String PROJECT = "pubsub-worker-demo";

  /** Names the Google Cloud CLI root to start emulators from; when set, the only one looked at. */
  private static final String CLOUD_SDK_VARIABLE = "CLOUDSDK_ROOT_DIR";

  private final DemoOptions options;
  private final PrintWriter out;
  private final String runId = UUID.randomUUID().toString().substring(0, 8);

  /**
   * @param options what to do
   * @param out where progress and the summary go
   */
  public Demo(DemoOptions options, PrintWriter out) {
    this.options = options;
    this.out = out;
  }

  /**
   * Runs the demo to the end.
   *
   * @return whether exactly-once held
   * @throws IOException if a server or an emulator cannot be started (the message says which and
   *     why)
   */
  public Result run() throws IOException, InterruptedException {
    List<AutoCloseable> cleanup = new ArrayList<>();
    try {
      Optional<String> pubsubHost = pubsub(cleanup);
      if (pubsubHost.isEmpty()) {
        return Result.UNAVAILABLE;
      }
      Optional<String> datastoreHost = Optional.empty();
      if (options.backend() == DemoBackend.DATASTORE) {
        datastoreHost =
            emulator(
                CloudEmulator.DATASTORE,
                "DATASTORE_EMULATOR_HOST",
                options.datastoreEmulatorHost(),
                cleanup);
        if (datastoreHost.isEmpty()) {
          return Result.UNAVAILABLE;
        }
      }
      PubSubConnection connection = PubSubConnection.create(pubsubHost);
      cleanup.add(0, connection);
      TopicName topic = TopicName.of(PROJECT, "demo-orders-" + runId);
      SubscriptionName subscription = SubscriptionName.of(PROJECT, "demo-orders-" + runId);
      createTopicAndSubscription(connection, topic, subscription);
      return process(connection, pubsubHost.get(), datastoreHost, topic, subscription);
    } finally {
      for (AutoCloseable c : cleanup) {
        try {
          c.close();
        } catch (Exception e) {
          LoggerFactory.getLogger(Demo.class).debug("cleanup failed", e);
        }
      }
    }
  }

  private Result process(
      PubSubConnection connection,
      String pubsubHost,
      Optional<String> datastoreHost,
      TopicName topic,
      SubscriptionName subscription)
      throws IOException, InterruptedException {
    int n = options.messages();
    Random random = new Random();
    List<String> orders = new ArrayList<>();
    for (int i = 1; i <= n; i++) {
      orders.add(String.format("po-%06d", i));
    }
    Set<String> failFirst = pick(orders, options.failures(), random);
    Set<String> crashed = pick(orders, options.crashes(), random);
    List<String> publishes = new ArrayList<>(orders);
    int duplicatePublishes = (int) Math.round(options.duplicates() * n);
    for (int i = 0; i < duplicatePublishes; i++) {
      publishes.add(orders.get(random.nextInt(n)));
    }
    Collections.shuffle(publishes, random);

    DemoSink sink = new DemoSink(failFirst);
    DemoStats stats = new DemoStats();
    WorkerConfig config =
        WorkerConfig.load(
            ConfigFactory.parseString(hocon(pubsubHost, datastoreHost, subscription))
                .withFallback(ConfigFactory.defaultReference())
                .resolve());
    Worker worker =
        Worker.newBuilder(config)
            .plugins(List.of(demoPlugin(sink, config)))
            .dispatchListeners(List.of(stats))
            .build();
    out.printf(
        "demo: %d orders, %d duplicate publishes, %d failing first placements, %d crashed"
            + " holders; lock store %s; Pub/Sub: %s at %s%n",
        n,
        duplicatePublishes,
        failFirst.size(),
        crashed.size(),
        options.backend().name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'),
        switch (options.pubsub().source()) {
          case EMBEDDED -> "embedded server";
          case GOOGLE_EMULATOR -> "Google's emulator";
          case RUNNING -> "running server";
        },
        pubsubHost);
    out.flush();
    worker.start();
    long started = System.nanoTime();
    try {
      // A crashed worker claimed these orders and died: their deliveries find the key held until
      // the lease lapses, then the next delivery takes over (fence 2). No cron, no cleanup.
      for (String id : crashed) {
        worker
            .backend()
            .claim(
                new ClaimRequest(
                    // The key the worker stores: the subscription's namespace, then the template.
                    config.subscriptions().get("orders").storedKey("orders:" + id),
                    LEASE,
                    Duration.ofHours(24),
                    "crashed-" + UUID.randomUUID(),
                    null));
      }
      publish(connection, topic, publishes);
      boolean done = awaitCompletion(worker, sink, stats, publishes.size(), started);
      printProgress(stats, started, true);
      out.println();
      return summary(sink, stats, orders, publishes.size(), duplicatePublishes, done);
    } finally {
      worker.stop();
    }
  }

  private boolean awaitCompletion(
      Worker worker, DemoSink sink, DemoStats stats, int publishes, long started)
      throws InterruptedException {
    long deadline = started + options.timeout().toNanos();
    long lastLine = 0;
    while (System.nanoTime() < deadline) {
      boolean allPlaced = sink.ledger.distinctOrders() == options.messages();
      boolean allSettled =
          stats.processed.get() + stats.duplicates.get() >= publishes && stats.inFlight.get() == 0;
      if (allPlaced && allSettled) {
        return true;
      }
      if (worker.failure().isPresent()) {
        return false;
      }
      if (options.interactive()) {
        printProgress(stats, started, false);
      } else if (System.nanoTime() - lastLine > TimeUnit.SECONDS.toNanos(2)) {
        printProgress(stats, started, true);
        lastLine = System.nanoTime();
      }
      TimeUnit.MILLISECONDS.sleep(200);
    }
    return false;
  }

  private void printProgress(DemoStats stats, long started, boolean newLine) {
    double seconds = Math.max(0.001, (System.nanoTime() - started) / 1e9);
    String line =
        String.format(
            "delivered %d | processed %d | duplicates skipped %d | retried %d | in flight %d |"
                + " %.1f msg/s",
            stats.delivered.get(),
            stats.processed.get(),
            stats.duplicates.get(),
            stats.retried(),
            stats.inFlight.get(),
            stats.delivered.get() / seconds);
    if (newLine) {
      out.println(line);
    } else {
      out.print("\r" + line + "   ");
    }
    out.flush();
  }

  private Result summary(
      DemoSink sink,
      DemoStats stats,
      List<String> orders,
      int publishes,
      int duplicatePublishes,
      boolean done) {
    int doubled = 0;
    int lost = 0;
    for (String id : orders) {
      int placed = sink.ledger.placements(id);
      if (placed > 1) {
        doubled++;
      }
      if (placed == 0) {
        lost++;
      }
    }
    boolean held = done && doubled == 0 && lost == 0;
    out.println();
    row("orders", orders.size());
    row("publishes", publishes + " (" + duplicatePublishes + " duplicate publishes)");
    row(
        "deliveries",
        stats.delivered.get() + " (" + (stats.delivered.get() - publishes) + " redeliveries)");
    row("effects (orders placed)", sink.ledger.totalPlacements());
    row("duplicates skipped", stats.duplicates.get());
    int otherNacks = stats.retried() - stats.failed.get();
    row(
        "retried (nacked)",
        stats.retried()
            + " ("
            + stats.failed.get()
            + " failed placements"
            + (otherNacks == 0 ? "" : ", " + otherNacks + " other failures")
            + ")");
    row(
        "parked (waited for a key)",
        stats.parked.get()
            + " ("
            + stats.parkedThenProcessed.get()
            + " then processed, "
            + stats.parkedThenDuplicate.get()
            + " then duplicates, "
            + stats.parkedTimeouts.get()
            + " timed out and nacked)");
    row("doubled effects", doubled);
    row("lost orders", lost);
    row("exactly-once", held ? "HELD" : "VIOLATED");
    out.flush();
    return held ? Result.EXACTLY_ONCE : Result.VIOLATED;
  }

  private void row(String label, Object value) {
    out.printf("  %-26s %s%n", label, value);
  }

  /** The Pub/Sub server's host:port; empty (after saying why) when there is none. */
  private Optional<String> pubsub(List<AutoCloseable> cleanup) throws IOException {
    DemoPubSub choice = options.pubsub();
    if (choice.source() == DemoPubSub.Source.EMBEDDED) {
      EmbeddedPubSub server = EmbeddedPubSub.start();
      cleanup.add(server);
      return Optional.of(server.hostPort());
    }
    if (choice.source() == DemoPubSub.Source.GOOGLE_EMULATOR) {
      return startEmulator(CloudEmulator.PUBSUB, cleanup);
    }
    String hostPort = choice.hostPort().orElseThrow();
    if (!PubSubProbe.answers(hostPort, PROJECT, Duration.ofSeconds(5))) {
      out.println(
          "demo: no Pub/Sub server answers at --pubsub "
              + hostPort
              + "; start one there, or leave --pubsub out to use the embedded server");
      out.flush();
      return Optional.empty();
    }
    return Optional.of(hostPort);
  }

  private Optional<String> emulator(
      CloudEmulator kind, String variable, Optional<String> given, List<AutoCloseable> cleanup)
      throws IOException {
    String configured = given.orElse(System.getenv(variable));
    if (configured != null && !configured.isBlank()) {
      if (!answers(configured)) {
        out.println(
            "demo: "
                + variable
                + "="
                + configured
                + " does not answer; start the emulator there or unset it");
        out.flush();
        return Optional.empty();
      }
      return Optional.of(configured);
    }
    return startEmulator(kind, cleanup);
  }

  /** Starts one of Google's emulators from the Cloud CLI; empty (after saying why) without one. */
  private Optional<String> startEmulator(CloudEmulator kind, List<AutoCloseable> cleanup)
      throws IOException {
    Optional<Path> binary = kind.findLauncher(CloudSdk.roots(CLOUD_SDK_VARIABLE));
    if (binary.isEmpty()) {
      out.println("demo: " + installHint(kind));
      out.flush();
      return Optional.empty();
    }
    Path logs = Files.createTempDirectory("pubsub-worker-demo-");
    ManagedProcess emulator = kind.start(binary.get(), logs, CloudEmulator.START_TIMEOUT);
    cleanup.add(emulator);
    return Optional.of("127.0.0.1:" + emulator.port());
  }

  /** One line saying what to install. */
  private static String installHint(CloudEmulator kind) {
    return switch (kind) {
      case PUBSUB ->
          "no Pub/Sub emulator found: install the Google Cloud CLI's pubsub-emulator (apt-get"
              + " install google-cloud-cli-pubsub-emulator, or gcloud components install"
              + " pubsub-emulator), pass --pubsub HOST:PORT of a running one, or leave --pubsub out"
              + " to use the embedded server";
      case DATASTORE ->
          "no Datastore emulator found: install the Google Cloud CLI's cloud-datastore-emulator"
              + " (apt-get install google-cloud-cli-datastore-emulator, or gcloud components"
              + " install cloud-datastore-emulator), or set DATASTORE_EMULATOR_HOST to a running"
              + " one";
      case FIRESTORE -> throw new IllegalArgumentException("the demo does not start " + kind);
    };
  }

  /** Whether {@code GET http://hostPort/} answers 200, as Google's emulators do when up. */
  private static boolean answers(String hostPort) {
    try {
      Probes.httpOk(hostPort, Duration.ofSeconds(1));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static void createTopicAndSubscription(
      PubSubConnection connection, TopicName topic, SubscriptionName subscription)
      throws IOException {
    try (TopicAdminClient topics = TopicAdminClient.create(connection.topicAdminSettings());
        SubscriptionAdminClient subs =
            SubscriptionAdminClient.create(connection.subscriptionAdminSettings())) {
      topics.createTopic(topic);
      subs.createSubscription(
          Subscription.newBuilder()
              .setName(subscription.toString())
              .setTopic(topic.toString())
              .setAckDeadlineSeconds(10)
              // A short backoff keeps nacked deliveries coming back quickly without spinning.
              .setRetryPolicy(
                  RetryPolicy.newBuilder()
                      .setMinimumBackoff(com.google.protobuf.Duration.newBuilder().setSeconds(1))
                      .setMaximumBackoff(com.google.protobuf.Duration.newBuilder().setSeconds(3)))
              .build());
    }
  }

  private void publish(PubSubConnection connection, TopicName topic, List<String> publishes)
      throws IOException, InterruptedException {
    Publisher publisher = connection.publisher(topic).build();
    try {
      List<ApiFuture<String>> sent = new ArrayList<>();
      for (String id : publishes) {
        sent.add(
            publisher.publish(
                PubsubMessage.newBuilder()
                    .setData(
                        ByteString.copyFromUtf8(
                            "{\"orderId\":\"" + id + "\",\"sku\":\"SKU-1\",\"quantity\":1}"))
                    .putAttributes("order_id", id)
                    .build()));
      }
      for (ApiFuture<String> f : sent) {
        f.get(60, TimeUnit.SECONDS);
      }
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new IOException("publishing to Pub/Sub failed", e);
    } finally {
      publisher.shutdown();
      publisher.awaitTermination(30, TimeUnit.SECONDS);
    }
  }

  private String hocon(
      String pubsubHost, Optional<String> datastoreHost, SubscriptionName subscription) {
    return """
        pubsub-worker {
          project-id = "%s"
          pubsub-emulator-host = "%s"
          shutdown-grace = 10s
          lock-store { %s }
          observability.http-port = 0
          subscriptions {
            orders {
              name = "%s"
              handler = orders
              key = "template:orders:{order_id}"
              lease = %ds
              executor-threads = 8
              flow-control.max-outstanding-messages = 200
            }
          }
        }
        """
        .formatted(
            PROJECT,
            pubsubHost,
            storeHocon(datastoreHost),
            subscription.getSubscription(),
            LEASE.toSeconds());
  }

  private String storeHocon(Optional<String> datastoreHost) {
    return switch (options.backend()) {
      case IN_MEMORY -> "type = in-memory";
      case H2 ->
          "type = sql, sql { jdbc-url = \"jdbc:h2:mem:pubsub-worker-demo-"
              + runId
              + ";DB_CLOSE_DELAY=-1\", table = pubsub_worker_demo }";
      case REDIS ->
          "type = redis, redis { uri = \""
              + options.storeUrl().orElse("redis://127.0.0.1:6379")
              + "\", key-prefix = \"pubsub-worker-demo:"
              + runId
              // Below two thirds of the short lease, so one slow extension cannot outlast it.
              + ":\", command-timeout = 2s }";
      case POSTGRES ->
          "type = sql, sql { jdbc-url = \""
              + options.storeUrl().orElse("jdbc:postgresql://127.0.0.1:5432/test?user=postgres")
              + "\", table = pubsub_worker_demo_"
              + runId.replace('-', '_')
              + " }";
      case DATASTORE ->
          "type = datastore, datastore { emulator-host = \""
              + datastoreHost.orElseThrow()
              + "\", namespace = \"demo-"
              + runId
              + "\" }";
    };
  }

  /** The example plugin, with the demo's failure-injecting sink in place of its ledger. */
  private static LoadedPlugin demoPlugin(DemoSink sink, WorkerConfig config) {
    OrdersPlugin orders = new OrdersPlugin();
    WorkerPlugin plugin =
        new WorkerPlugin() {
          @Override
          public String name() {
            return orders.name();
          }

          @Override
          public com.google.inject.Module module(com.typesafe.config.Config c) {
            return Modules.override(orders.module(c))
                .with(binder -> binder.bind(OrderSink.class).toInstance(sink));
          }
        };
    return new LoadedPlugin(
        plugin,
        "built in",
        config
            .pluginConfig(OrdersPlugin.NAME)
            .withFallback(ConfigFactory.parseString("max-quantity = 100")));
  }

  private static Set<String> pick(List<String> orders, double share, Random random) {
    int count = (int) Math.round(share * orders.size());
    List<String> shuffled = new ArrayList<>(orders);
    Collections.shuffle(shuffled, random);
    return new HashSet<>(shuffled.subList(0, count));
  }

  /**
   * Quiets the worker's own logging (the root logger OFF) so the progress line stays readable.
   *
   * @return what gives the logs back: it sets the root logger to the level it had before; run it
   *     when the demo ends
   */
  public static Runnable quietLogs() {
    Logger root = LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME);
    if (root instanceof ch.qos.logback.classic.Logger logback) {
      Level previous = logback.getLevel();
      logback.setLevel(Level.OFF);
      return () -> logback.setLevel(previous);
    }
    return () -> {};
  }
}
