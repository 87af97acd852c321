package dev.pubsubworker.runtime.e2e;

import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.typesafe.config.ConfigFactory;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.store.LockStore;
import dev.pubsubworker.runtime.testing.CliProcess;
import dev.pubsubworker.testservices.PubSubEmulator;
import dev.pubsubworker.testservices.SqlDatabase;
import dev.pubsubworker.testservices.SubscriptionFixture;
import dev.pubsubworker.testservices.TestServices;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * What the crash tests share: worker processes ({@code run}) on one subscription whose handler is
 * {@link SlowEffectPlugin}'s, with a transactional PostgreSQL lock store, and the table of effects
 * they commit ({@code id, fence, pid, at}), under names unique to the test. {@link #close} kills
 * the processes, prints the end of each one's log into the test's report and drops the tables.
 */
final class SlowEffectWorkers implements AutoCloseable {

  private final Path dir;
  private final PubSubEmulator pubsub;
  private final SubscriptionFixture fixture;
  private final SqlDatabase db;
  private final String effects;
  private final String locks;
  private final String store;
  private final Path plugin;
  private final List<Process> processes = new ArrayList<>();

  /** Creates the tables (the lock table once here, so that workers starting together need not). */
  SlowEffectWorkers(Path dir, PubSubEmulator pubsub, SubscriptionFixture fixture)
      throws IOException, SQLException {
    this.dir = dir;
    this.pubsub = pubsub;
    this.fixture = fixture;
    this.db = TestServices.postgres();
    this.effects = TestServices.uniqueName("effects");
    this.locks = TestServices.uniqueName("effect_locks");
    try (Connection c = db.dataSource().getConnection();
        Statement s = c.createStatement()) {
      // No unique constraint: a doubled effect must show up as two rows, not as an error.
      s.execute(
          "CREATE TABLE "
              + effects
              + " (id text NOT NULL, fence bigint, pid bigint,"
              + " at timestamptz NOT NULL DEFAULT clock_timestamp())");
    }
    this.store =
        """
        pubsub-worker.lock-store {
          type = sql
          sql { jdbc-url = "%s", user = "%s", password = "%s", table = %s }
        }
        """
            .formatted(db.jdbcUrl(), db.user(), db.password(), locks);
    LockStore.of(
            WorkerConfig.load(
                ConfigFactory.parseString(
                        store
                            + "pubsub-worker.lock-store.sql.create-table = true\n"
                            + "pubsub-worker { project-id = p, subscriptions { s { handler = h } } }")
                    .withFallback(ConfigFactory.defaultReference())
                    .resolve()))
        .close();
    this.plugin = CliProcess.withPlugin(dir, SlowEffectPlugin.class, SlowEffectPlugin.REFERENCE);
  }

  /**
   * Starts worker {@code name}: subscription {@code work} keyed by the message's {@code id}
   * attribute, transactional, its handler holding each transaction for {@code workTime}, with
   * {@code subscriptionSettings} added; its config is {@link #config}, its log {@link #log}.
   */
  Process start(String name, Duration workTime, String subscriptionSettings) throws IOException {
    Files.writeString(
        config(name),
        """
        pubsub-worker {
          project-id = "%s"
          pubsub-emulator-host = "%s"
          shutdown-grace = 5s
          observability.http-port = 0
          plugins.slow-effects { table = %s, work-time = %dms }
          subscriptions {
            work {
              name = "%s"
              handler = slow-effect
              key = "template:effect:{id}"
              transactional = true
              %s
            }
          }
        }
        %s
        """
            .formatted(
                pubsub.projectId(),
                pubsub.hostPort(),
                effects,
                workTime.toMillis(),
                fixture.subscription().getSubscription(),
                subscriptionSettings,
                store));
    Process p =
        CliProcess.builder(
                logFile(name), List.of(plugin), "run", "--config", config(name).toString())
            .start();
    processes.add(p);
    return p;
  }

  /**
   * Publishes {@code count} messages {@code m-00}, {@code m-01}, ... (data and attribute {@code
   * id}), one publish call each, so that each goes out to the streams in a response of its own.
   */
  void publish(int count) {
    for (int i = 0; i < count; i++) {
      String id = String.format("m-%02d", i);
      pubsub.publish(
          fixture.topic(),
          PubsubMessage.newBuilder()
              .setData(ByteString.copyFromUtf8(id))
              .putAttributes("id", id)
              .build());
    }
  }

  /** Worker {@code name}'s config file. */
  Path config(String name) {
    return dir.resolve(name + ".conf");
  }

  /** What worker {@code name} has logged so far. */
  String log(String name) throws IOException {
    return Files.readString(logFile(name));
  }

  /** Waits until worker {@code name}'s subscriber is pulling. */
  void awaitPulling(String name) {
    await().atMost(Duration.ofSeconds(90)).until(() -> log(name).contains("pulling;"));
  }

  /** How many committed effects each message id has. */
  Map<String, Integer> effectsPerId() throws SQLException {
    Map<String, Integer> perId = new TreeMap<>();
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement s =
            c.prepareStatement("SELECT id, count(*) FROM " + effects + " GROUP BY id");
        ResultSet r = s.executeQuery()) {
      while (r.next()) {
        perId.put(r.getString(1), r.getInt(2));
      }
    }
    return perId;
  }

  /** How many effects the process {@code pid} committed. */
  int committedBy(long pid) throws SQLException {
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement s =
            c.prepareStatement("SELECT count(*) FROM " + effects + " WHERE pid = ?")) {
      s.setLong(1, pid);
      try (ResultSet r = s.executeQuery()) {
        r.next();
        return r.getInt(1);
      }
    }
  }

  /** The fence of message {@code id}'s (first) committed effect; 0 if it has none. */
  long committedFence(String id) throws SQLException {
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement s =
            c.prepareStatement("SELECT fence FROM " + effects + " WHERE id = ?")) {
      s.setString(1, id);
      try (ResultSet r = s.executeQuery()) {
        return r.next() ? r.getLong(1) : 0;
      }
    }
  }

  /**
   * When each message's effect was written (its handler's start), in seconds after {@code
   * epochMillis}, to a tenth; the database's clock, which is this host's.
   */
  Map<String, Double> secondsAfter(long epochMillis) throws SQLException {
    Map<String, Double> after = new TreeMap<>();
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement s =
            c.prepareStatement("SELECT id, extract(epoch FROM at) * 1000 FROM " + effects);
        ResultSet r = s.executeQuery()) {
      while (r.next()) {
        after.put(r.getString(1), Math.round((r.getDouble(2) - epochMillis) / 100.0) / 10.0);
      }
    }
    return after;
  }

  @Override
  public void close() throws IOException, SQLException {
    for (Process p : processes) {
      p.destroyForcibly();
      try {
        p.waitFor(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    // The workers' logs go with the temporary folder: keep their ends in the test's report.
    try (var logs = Files.list(dir)) {
      for (Path log : logs.filter(f -> f.toString().endsWith(".log")).sorted().toList()) {
        List<String> lines = Files.readAllLines(log);
        System.out.println("--- last lines of " + log.getFileName());
        lines.subList(Math.max(0, lines.size() - 30), lines.size()).forEach(System.out::println);
      }
    }
    try (Connection c = db.dataSource().getConnection();
        Statement s = c.createStatement()) {
      s.execute("DROP TABLE IF EXISTS " + effects);
      s.execute("DROP TABLE IF EXISTS " + locks);
    }
  }

  private Path logFile(String name) {
    return dir.resolve(name + ".log");
  }
}
