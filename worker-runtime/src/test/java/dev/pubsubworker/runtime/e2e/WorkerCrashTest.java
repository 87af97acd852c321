package dev.pubsubworker.runtime.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.typesafe.config.ConfigFactory;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.store.LockStore;
import dev.pubsubworker.runtime.testing.CliProcess;
import dev.pubsubworker.runtime.testing.TestPubSub;
import dev.pubsubworker.testservices.PubSubEmulator;
import dev.pubsubworker.testservices.SqlDatabase;
import dev.pubsubworker.testservices.SubscriptionFixture;
import dev.pubsubworker.testservices.SubscriptionSpec;
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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The crash this product exists for, with real processes: three workers ({@code run}, as a
 * deployment starts them) share one subscription of the embedded server and a transactional
 * PostgreSQL lock store; two are killed with SIGKILL while their handlers hold open transactions
 * with written rows. Every message must end with exactly one committed row. Google's emulator
 * cannot run this: it never redelivers the messages of a killed stream.
 */
class WorkerCrashTest {

  private static final int MESSAGES = 24;
  private static final Pattern HOLDING =
      Pattern.compile("effect written for (m-\\d+), holding the transaction");

  @TempDir Path dir;

  private final List<Process> processes = new ArrayList<>();
  private final List<String> tables = new ArrayList<>();
  private SqlDatabase db;

  @AfterEach
  void stopEverything() throws Exception {
    for (Process p : processes) {
      p.destroyForcibly();
      p.waitFor(30, TimeUnit.SECONDS);
    }
    // The workers' logs go with the temporary folder: keep their ends in the test's report.
    try (var logs = Files.list(dir)) {
      for (Path log : logs.filter(f -> f.toString().endsWith(".log")).sorted().toList()) {
        List<String> lines = Files.readAllLines(log);
        System.out.println("--- last lines of " + log.getFileName());
        lines.subList(Math.max(0, lines.size() - 30), lines.size()).forEach(System.out::println);
      }
    }
    if (db != null) {
      try (Connection c = db.dataSource().getConnection();
          Statement s = c.createStatement()) {
        for (String table : tables) {
          s.execute("DROP TABLE IF EXISTS " + table);
        }
      }
    }
  }

  @Test
  void workers_killed_mid_work_leave_every_message_processed_once() throws Exception {
    db = TestServices.postgres();
    PubSubEmulator pubsub = TestPubSub.embedded();
    SubscriptionFixture fixture =
        pubsub.createSubscription(
            SubscriptionSpec.newBuilder()
                .setAckDeadline(Duration.ofSeconds(10))
                .setRetryPolicy(Duration.ofSeconds(1), Duration.ofSeconds(2))
                .build());
    String effects = table("crash_effects");
    String locks = table("crash_locks");
    try (Connection c = db.dataSource().getConnection();
        Statement s = c.createStatement()) {
      // No unique constraint: a doubled effect must show up as two rows, not as an error.
      s.execute("CREATE TABLE " + effects + " (id text NOT NULL, fence bigint, pid bigint)");
    }
    String store =
        """
        pubsub-worker.lock-store {
          type = sql
          sql { jdbc-url = "%s", user = "%s", password = "%s", table = %s }
        }
        """
            .formatted(db.jdbcUrl(), db.user(), db.password(), locks);
    // Created once here, so that three workers starting together do not race to create it.
    LockStore.of(lockStoreOnly(store + "pubsub-worker.lock-store.sql.create-table = true")).close();
    Path plugin = CliProcess.withPlugin(dir, SlowEffectPlugin.class, SlowEffectPlugin.REFERENCE);

    // The victims hold every message they take (and its open transaction) until they die.
    Process victim1 = start("victim1", pubsub, fixture, store, effects, "10m", 2, plugin);
    Process victim2 = start("victim2", pubsub, fixture, store, effects, "10m", 2, plugin);
    awaitStarted("victim1", "victim2");
    for (int i = 0; i < MESSAGES; i++) {
      String id = String.format("m-%02d", i);
      pubsub.publish(
          fixture.topic(),
          PubsubMessage.newBuilder()
              .setData(ByteString.copyFromUtf8(id))
              .putAttributes("id", id)
              .build());
    }
    await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> !held("victim1").isEmpty() && !held("victim2").isEmpty());
    Process survivor = start("survivor", pubsub, fixture, store, effects, "200ms", 4, plugin);
    awaitStarted("survivor");

    Set<String> killedMidWork = new TreeSet<>(held("victim1"));
    killedMidWork.addAll(held("victim2"));
    victim1.destroyForcibly(); // SIGKILL
    victim2.destroyForcibly();
    assertThat(victim1.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(victim2.waitFor(30, TimeUnit.SECONDS)).isTrue();
    // Their transactions died with them: none of the rows they wrote was committed.
    assertThat(committedBy(effects, victim1.pid()) + committedBy(effects, victim2.pid())).isZero();

    // The embedded server redelivers what the dead streams held once its ack deadline passes; the
    // dead claims' leases (3 s) have lapsed by then, so the survivor takes over.
    long killed = System.nanoTime();
    await()
        .atMost(Duration.ofSeconds(120))
        .pollInterval(Duration.ofMillis(500))
        .until(() -> effectsPerId(effects).size() == MESSAGES);
    System.out.printf(
        "all %d messages committed %.1f s after the kill%n",
        MESSAGES, (System.nanoTime() - killed) / 1e9);
    Map<String, Integer> perId = effectsPerId(effects);
    assertThat(perId).hasSize(MESSAGES);
    assertThat(perId.values()).as("effects per message id: %s", perId).containsOnly(1);
    assertThat(committedBy(effects, survivor.pid())).isEqualTo(MESSAGES);
    // What the dead held was redone under a new claim: its lease lapsed, the survivor took over.
    assertThat(killedMidWork).isNotEmpty();
    for (String id : killedMidWork) {
      assertThat(committedFence(effects, id)).as("fence of %s's row", id).isGreaterThan(1);
    }

    survivor.destroy(); // SIGTERM: a clean stop
    assertThat(survivor.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(survivor.exitValue()).isZero();
  }

  private String table(String prefix) {
    String name = TestServices.uniqueName(prefix);
    tables.add(name);
    return name;
  }

  private Process start(
      String name,
      PubSubEmulator pubsub,
      SubscriptionFixture fixture,
      String store,
      String effects,
      String workTime,
      int maxOutstanding,
      Path plugin)
      throws IOException {
    Path config = dir.resolve(name + ".conf");
    Files.writeString(
        config,
        """
        pubsub-worker {
          project-id = "%s"
          pubsub-emulator-host = "%s"
          shutdown-grace = 5s
          plugins.slow-effects { table = %s, work-time = %s }
          subscriptions {
            work {
              name = "%s"
              handler = slow-effect
              key = "template:crash:{id}"
              transactional = true
              lease = 3s
              executor-threads = 2
              flow-control.max-outstanding-messages = %d
            }
          }
        }
        %s
        """
            .formatted(
                pubsub.projectId(),
                pubsub.hostPort(),
                effects,
                workTime,
                fixture.subscription().getSubscription(),
                maxOutstanding,
                store));
    Process p =
        CliProcess.builder(
                dir.resolve(name + ".log"), List.of(plugin), "run", "--config", config.toString())
            .start();
    processes.add(p);
    return p;
  }

  private void awaitStarted(String... names) {
    await()
        .atMost(Duration.ofSeconds(90))
        .until(
            () -> {
              for (String name : names) {
                if (!log(name).contains("worker started")) {
                  return false;
                }
              }
              return true;
            });
  }

  private String log(String name) throws IOException {
    return Files.readString(dir.resolve(name + ".log"));
  }

  /** The message ids whose rows {@code name} wrote and was holding uncommitted. */
  private Set<String> held(String name) throws IOException {
    Set<String> ids = new TreeSet<>();
    Matcher m = HOLDING.matcher(log(name));
    while (m.find()) {
      ids.add(m.group(1));
    }
    return ids;
  }

  private int committedBy(String effects, long pid) throws SQLException {
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

  private long committedFence(String effects, String id) throws SQLException {
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement s =
            c.prepareStatement("SELECT fence FROM " + effects + " WHERE id = ?")) {
      s.setString(1, id);
      try (ResultSet r = s.executeQuery()) {
        assertThat(r.next()).as("a row for %s", id).isTrue();
        return r.getLong(1);
      }
    }
  }

  private Map<String, Integer> effectsPerId(String effects) throws SQLException {
    Map<String, Integer> perId = new HashMap<>();
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

  private static WorkerConfig lockStoreOnly(String store) {
    return WorkerConfig.load(
        ConfigFactory.parseString(
                store + "\npubsub-worker { project-id = p, subscriptions { s { handler = h } } }")
            .withFallback(ConfigFactory.defaultReference())
            .resolve());
  }
}
