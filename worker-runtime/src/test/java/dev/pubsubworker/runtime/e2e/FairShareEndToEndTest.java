package dev.pubsubworker.runtime.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.typesafe.config.ConfigFactory;
import dev.pubsubworker.embedded.EmbeddedPubSub;
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
 * Horizontal scaling with real processes: three workers ({@code run}, as a deployment starts them)
 * share one subscription of the embedded server and a transactional PostgreSQL lock store. Each
 * processes a fair share of a small backlog; then one of them, holding its share of a second
 * backlog in open transactions, is killed with SIGKILL, and the other two take that share over
 * between them. Every message ends with exactly one committed row.
 *
 * <p>The killed worker asks for ack-deadline extensions of at most 10 s ({@code
 * max-ack-extension-per-call = 10s}, so its stream ack deadline is 10 s too): what it held comes
 * back within 10 s of the kill, whatever the runtime's defaults are. It has enough handler threads
 * to start every message it is dealt, so its log names its whole share.
 */
class FairShareEndToEndTest {

  private static final int WORKERS = 3;
  private static final int BACKLOG = 30;
  private static final Pattern HOLDING =
      Pattern.compile("effect written for (h-\\d+), holding the transaction");

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
  void three_workers_share_a_backlog_and_two_take_over_the_share_of_one_killed() throws Exception {
    db = TestServices.postgres();
    PubSubEmulator pubsub = TestPubSub.embedded();
    EmbeddedPubSub server = TestPubSub.embeddedServer();
    SubscriptionFixture fixture =
        pubsub.createSubscription(
            SubscriptionSpec.newBuilder()
                .setAckDeadline(Duration.ofSeconds(10))
                .setRetryPolicy(Duration.ofSeconds(1), Duration.ofSeconds(2))
                .build());
    String effects = table("fair_effects");
    String locks = table("fair_locks");
    try (Connection c = db.dataSource().getConnection();
        Statement s = c.createStatement()) {
      // No unique constraint: a doubled effect must show up as two rows, not as an error.
      s.execute("CREATE TABLE " + effects + " (id text NOT NULL, fence bigint, pid bigint)");
    }
    String store =
        """
        pubsub-worker.lock-store {
          type = sql
          sql { jdbc-url = "%s", user = "%s", password = "%s", table = %s, maximum-pool-size = 24 }
        }
        """
            .formatted(db.jdbcUrl(), db.user(), db.password(), locks);
    LockStore.of(lockStoreOnly(store + "pubsub-worker.lock-store.sql.create-table = true")).close();
    Path plugin = CliProcess.withPlugin(dir, SlowEffectPlugin.class, SlowEffectPlugin.REFERENCE);

    // The victim processes like the others, except that it holds messages marked "hold" until it
    // dies; its deadline extensions are short so that what it holds comes back soon after.
    Process a = start("worker-a", pubsub, fixture, store, effects, false, plugin);
    Process b = start("worker-b", pubsub, fixture, store, effects, false, plugin);
    Process victim = start("victim", pubsub, fixture, store, effects, true, plugin);
    awaitStarted("worker-a", "worker-b", "victim");
    String subscription = fixture.subscription().toString();
    await().atMost(Duration.ofSeconds(30)).until(() -> server.openStreams(subscription) == WORKERS);

    // A small backlog, published at once: each worker processes a third of it.
    publish(pubsub, fixture, "f", false);
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> committed(effects, "f-%").size() == BACKLOG);
    Map<Long, Integer> firstShares = sharesByPid(effects, "f-%");
    System.out.printf("first backlog, rows per worker: %s%n", describe(firstShares, a, b, victim));
    assertFairShares(
        List.of(share(firstShares, a), share(firstShares, b), share(firstShares, victim)), BACKLOG);

    // A second one: the victim holds its share, the others process theirs.
    publish(pubsub, fixture, "h", true);
    await()
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(200))
        .until(() -> committed(effects, "h-%").size() + held("victim").size() == BACKLOG);
    Set<String> victimsShare = held("victim");
    Map<Long, Integer> beforeKill = sharesByPid(effects, "h-%");
    System.out.printf(
        "second backlog, rows per worker and held by the victim: %s, victim=%d%n",
        describe(beforeKill, a, b), victimsShare.size());
    assertFairShares(
        List.of(share(beforeKill, a), share(beforeKill, b), victimsShare.size()), BACKLOG);

    victim.destroyForcibly(); // SIGKILL: its transactions and streams die with it
    assertThat(victim.waitFor(30, TimeUnit.SECONDS)).isTrue();
    long killed = System.nanoTime();
    await()
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofMillis(500))
        .until(() -> committed(effects, "h-%").size() == BACKLOG);
    System.out.printf(
        "the victim's %d messages committed %.1f s after the kill%n",
        victimsShare.size(), (System.nanoTime() - killed) / 1e9);

    Map<String, Integer> rowsPerId = rowsPerId(effects);
    assertThat(rowsPerId).as("rows per message id").hasSize(2 * BACKLOG);
    assertThat(rowsPerId.values()).as("rows per message id: %s", rowsPerId).containsOnly(1);
    Map<Long, Integer> afterKill = sharesByPid(effects, "h-%");
    assertThat(share(afterKill, victim)).as("rows the victim committed").isZero();
    List<Integer> takenOver =
        List.of(
            share(afterKill, a) - share(beforeKill, a), share(afterKill, b) - share(beforeKill, b));
    System.out.printf("the victim's share, taken over by worker-a and worker-b: %s%n", takenOver);
    assertFairShares(takenOver, victimsShare.size());
    for (String id : victimsShare) {
      // Its claim's lease lapsed with it: the worker that took over claimed it anew.
      assertThat(committedFence(effects, id)).as("fence of %s's row", id).isGreaterThan(1);
    }

    a.destroy(); // SIGTERM: a clean stop
    b.destroy();
    assertThat(a.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(b.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(a.exitValue()).isZero();
    assertThat(b.exitValue()).isZero();
  }

  /** Each share within a quarter of an even share (of 30 over three workers: 8 to 12). */
  private static void assertFairShares(List<Integer> shares, int total) {
    assertThat(shares.stream().mapToInt(Integer::intValue).sum()).isEqualTo(total);
    double even = (double) total / shares.size();
    for (int share : shares) {
      assertThat((double) share)
          .as("a share of %s (even: %.1f, within a quarter of it)", shares, even)
          .isBetween(even * 0.75, even * 1.25);
    }
  }

  /** Publishes {@code prefix-00} to {@code prefix-29} in one request, marked "hold" or not. */
  private static void publish(
      PubSubEmulator pubsub, SubscriptionFixture fixture, String prefix, boolean hold) {
    List<PubsubMessage> messages = new ArrayList<>();
    for (String id : ids(prefix, BACKLOG)) {
      PubsubMessage.Builder message =
          PubsubMessage.newBuilder().setData(ByteString.copyFromUtf8(id)).putAttributes("id", id);
      if (hold) {
        message.putAttributes("hold", "until-killed");
      }
      messages.add(message.build());
    }
    pubsub.topicAdmin().publish(fixture.topic(), messages);
  }

  private static List<String> ids(String prefix, int count) {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      ids.add(String.format("%s-%02d", prefix, i));
    }
    return ids;
  }

  private String table(String prefix) {
    String name = TestServices.uniqueName(prefix);
    tables.add(name);
    return name;
  }

  /**
   * Starts a worker process; the {@code victim} holds messages marked "hold" (in as many handlers
   * as it is dealt) and asks for short deadline extensions.
   */
  private Process start(
      String name,
      PubSubEmulator pubsub,
      SubscriptionFixture fixture,
      String store,
      String effects,
      boolean victim,
      Path plugin)
      throws IOException {
    String victimSettings =
        """
        min-ack-extension = 5s
        max-ack-extension-per-call = 10s
        """;
    Path config = dir.resolve(name + ".conf");
    Files.writeString(
        config,
        """
        pubsub-worker {
          project-id = "%s"
          pubsub-emulator-host = "%s"
          shutdown-grace = 5s
          plugins.slow-effects { table = %s, work-time = 100ms, hold-attribute = "%s" }
          subscriptions {
            work {
              name = "%s"
              handler = slow-effect
              key = "template:fair:{id}"
              transactional = true
              lease = 3s
              executor-threads = %d
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
                victim ? "hold" : "",
                fixture.subscription().getSubscription(),
                victim ? 16 : 2,
                victim ? victimSettings : "",
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
                if (!Files.readString(dir.resolve(name + ".log")).contains("worker started")) {
                  return false;
                }
              }
              return true;
            });
  }

  /** The message ids whose rows {@code name} wrote and was holding uncommitted. */
  private Set<String> held(String name) throws IOException {
    Set<String> ids = new TreeSet<>();
    Matcher m = HOLDING.matcher(Files.readString(dir.resolve(name + ".log")));
    while (m.find()) {
      ids.add(m.group(1));
    }
    return ids;
  }

  private static String describe(Map<Long, Integer> shares, Process... workers) {
    List<String> parts = new ArrayList<>();
    for (Process worker : workers) {
      parts.add(worker.pid() + "=" + share(shares, worker));
    }
    return String.join(", ", parts);
  }

  private static int share(Map<Long, Integer> shares, Process worker) {
    return shares.getOrDefault(worker.pid(), 0);
  }

  /** Committed rows by message id, for ids matching the SQL pattern {@code like}. */
  private Map<String, Long> committed(String effects, String like) throws SQLException {
    Map<String, Long> pids = new HashMap<>();
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement s =
            c.prepareStatement("SELECT id, pid FROM " + effects + " WHERE id LIKE ?")) {
      s.setString(1, like);
      try (ResultSet r = s.executeQuery()) {
        while (r.next()) {
          pids.put(r.getString(1), r.getLong(2));
        }
      }
    }
    return pids;
  }

  /** Committed rows per worker pid, for ids matching {@code like}. */
  private Map<Long, Integer> sharesByPid(String effects, String like) throws SQLException {
    Map<Long, Integer> shares = new HashMap<>();
    try (Connection c = db.dataSource().getConnection();
        PreparedStatement s =
            c.prepareStatement(
                "SELECT pid, count(*) FROM " + effects + " WHERE id LIKE ? GROUP BY pid")) {
      s.setString(1, like);
      try (ResultSet r = s.executeQuery()) {
        while (r.next()) {
          shares.put(r.getLong(1), r.getInt(2));
        }
      }
    }
    return shares;
  }

  private Map<String, Integer> rowsPerId(String effects) throws SQLException {
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

  private static WorkerConfig lockStoreOnly(String store) {
    return WorkerConfig.load(
        ConfigFactory.parseString(
                store + "\npubsub-worker { project-id = p, subscriptions { s { handler = h } } }")
            .withFallback(ConfigFactory.defaultReference())
            .resolve());
  }
}
