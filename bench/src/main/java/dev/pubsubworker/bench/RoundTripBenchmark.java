package dev.pubsubworker.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.pubsubworker.backend.redis.RedisLockBackend;
import dev.pubsubworker.backend.redis.RedisLockSettings;
import dev.pubsubworker.backend.sql.SqlLockBackend;
import dev.pubsubworker.backend.sql.SqlLockSettings;
import dev.pubsubworker.core.IdempotencyGuard;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Server-side counts per message of the guard on Redis and PostgreSQL: {@code N} messages on fresh
 * keys ("processed": claim + no-op work + complete) and {@code N} on DONE keys ("duplicate"), run
 * by 1 and by 8 concurrent handler threads, printed as a table.
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar dev.pubsubworker.bench.RoundTripBenchmark \
 *     [--messages 1000] [--threads 1,8] [--stores redis,postgresql] [--latency-ms 0]
 * </pre>
 *
 * <p>{@code --latency-ms M} puts a relay ({@code TcpProxy} of worker-test-services, with latency)
 * between the guards and their stores that adds {@code M} ms each way, as a network would (a
 * managed Redis or database is typically 0.2 to 1 ms away); the counting connections go to the
 * servers directly.
 *
 * <ul>
 *   <li>Redis: from Redis's {@code MONITOR} feed ({@link RedisMonitor}), the top-level commands
 *       that name the benchmark's keys (each one a client request: {@code EVALSHA} and the like),
 *       and apart from them the commands their scripts ran inside Redis. Other clients' commands
 *       are not counted, so the shared Redis works; {@code MONITOR} slows Redis, so no timing is
 *       taken here.
 *   <li>PostgreSQL: {@code pg_stat_statements} is not loaded on the local server, so the server
 *       side is {@code pg_stat_database.xact_commit + xact_rollback} of a database only this
 *       benchmark uses ({@code pwbench_rt}, created if missing); the benchmark waits for the
 *       backends to flush their statistics (idle 11 s before, pool closed after). Beside it, a
 *       counting {@code DataSource} ({@link CountingDataSource}) gives the client-side JDBC
 *       statement executions, commits and rollbacks.
 * </ul>
 *
 * <p>The guard runs with its defaults (lease 30 s, heartbeat on) and a 10-minute TTL. Redis comes
 * from {@code REDIS_URL}, PostgreSQL from {@code POSTGRES_URL} ({@link Endpoints}); keys and tables
 * are deleted at the end.
 */
public final class RoundTripBenchmark {

  private static final String DATABASE = "pwbench_rt";

  private final String run = UUID.randomUUID().toString().substring(0, 8);
  private final Endpoints endpoints = Endpoints.fromEnvironment();

  /** Where the guards' stores are reached: {@link #endpoints}, or relays adding latency. */
  private final Endpoints stores;

  private final List<String> rows = new ArrayList<>();

  private RoundTripBenchmark(Duration oneWay) throws IOException {
    this.stores = endpoints.withLatency(oneWay);
  }

  /** Runs the benchmark; see the class comment. */
  @Command(
      name = "RoundTripBenchmark",
      description = "Store round trips and server work per processed message, by store.")
  static final class Options {
    @picocli.CommandLine.Mixin BenchOptions.Help help;

    @Option(names = "--messages", description = "Messages per row (default 1000).")
    int messages = 1000;

    @Option(names = "--threads", split = ",", description = "Thread counts (default 1,8).")
    List<Integer> threads = List.of(1, 8);

    @Option(names = "--stores", split = ",", description = "redis, postgresql (default both).")
    List<String> stores = List.of("redis", "postgresql");

    @Option(names = "--latency-ms", description = "Added each way through a relay (default 0).")
    double latencyMs;
  }

  public static void main(String[] args) throws Exception {
    Options o = BenchOptions.parseOrExit(new Options(), args);
    int messages = o.messages;
    List<Integer> threads = o.threads;
    List<String> stores = o.stores;
    Duration oneWay = Duration.ofNanos((long) (o.latencyMs * 1e6));
    // HikariCP checks a connection idle for over 500 ms before lending it (an empty query, which
    // PostgreSQL counts as a transaction); the pools here idle 11 s on purpose, so skip that check.
    System.setProperty("com.zaxxer.hikari.aliveBypassWindowMs", "600000");
    RoundTripBenchmark bench = new RoundTripBenchmark(oneWay);
    System.out.printf(
        Locale.ROOT,
        "%,d messages per row, %s ms added each way to the stores, load average %s%n",
        messages,
        oneWay.toNanos() / 1e6,
        Samples.loadAverage());
    for (int t : threads) {
      if (stores.contains("redis")) {
        bench.redis(messages, t);
      }
      if (stores.contains("postgresql")) {
        bench.postgres(messages, t);
      }
    }
    System.out.printf(
        Locale.ROOT,
        "%n%-10s %7s %-9s %10s  %s%n",
        "store",
        "threads",
        "message",
        "per msg",
        "what (per message)");
    bench.rows.forEach(System.out::println);
  }

  // ---------------------------------------------------------------- Redis

  private void redis(int messages, int threads) throws Exception {
    String prefix = "pwbench-rt:" + run + ":" + threads + ":";
    RedisLockBackend backend =
        RedisLockBackend.create(
            RedisLockSettings.newBuilder().uri(stores.redisUri()).keyPrefix(prefix).build());
    backend.checkConnection();
    IdempotencyGuard guard =
        IdempotencyGuard.newBuilder(backend).ttl(Duration.ofMinutes(10)).build();
    RedisClient client = RedisClient.create(endpoints.redisUri());
    try (StatefulRedisConnection<String, String> control = client.connect()) {
      drive(guard, "warm", 200, threads);
      drive(guard, "d", messages, threads); // the DONE keys the duplicates will hit
      for (String kind : List.of("processed", "duplicate")) {
        String sentinel = "pwbench-rt-end-" + UUID.randomUUID();
        Map<String, Long> top;
        Map<String, Long> inner;
        try (RedisMonitor monitor = new RedisMonitor(endpoints.redisUri(), prefix, sentinel)) {
          drive(guard, kind.equals("processed") ? "p" : "d", messages, threads);
          control.sync().echo(sentinel);
          monitor.awaitSentinel();
          top = monitor.topLevel;
          inner = monitor.inScripts;
        }
        long total = top.values().stream().mapToLong(Long::longValue).sum();
        rows.add(
            String.format(
                Locale.ROOT,
                "%-10s %7d %-9s %10.3f  commands sent: %s; run inside scripts: %s",
                "redis",
                threads,
                kind,
                (double) total / messages,
                perMessage(top, messages),
                perMessage(inner, messages)));
      }
    } finally {
      guard.close();
      backend.close();
      client.shutdown();
      RedisKeys.deleteByPrefix(endpoints.redisUri(), prefix);
    }
  }

  private static String perMessage(Map<String, Long> counts, int messages) {
    if (counts.isEmpty()) {
      return "none";
    }
    return counts.entrySet().stream()
        .map(
            e ->
                String.format(Locale.ROOT, "%s %.3f", e.getKey(), (double) e.getValue() / messages))
        .collect(Collectors.joining(", "));
  }

  // ----------------------------------------------------------- PostgreSQL

  private void postgres(int messages, int threads) throws Exception {
    String table = "rt_" + run + "_" + threads;
    try (HikariDataSource admin = endpoints.pool("rt-admin", endpoints.jdbcUrl(), 1)) {
      ensureDatabase(admin);
      String url = endpoints.jdbcUrlOf(DATABASE);
      // The DONE keys the duplicates will hit, on a pool of their own.
      try (HikariDataSource pool = endpoints.pool("rt-setup", url, threads + 2)) {
        IdempotencyGuard guard = sqlGuard(pool, table);
        drive(guard, "d", messages, threads);
        guard.close();
      }
      for (String kind : List.of("processed", "duplicate")) {
        HikariDataSource pool = stores.pool("rt-" + kind, stores.jdbcUrlOf(DATABASE), threads + 2);
        CountingDataSource counting = new CountingDataSource(pool);
        IdempotencyGuard guard = sqlGuard(counting.dataSource(), table);
        long[] before;
        try {
          drive(guard, "warm-" + kind, 100, threads);
          // Backends flush their statistics when idle: at once if the last flush is 1 s old,
          // else after 10 s. Wait them out so that the warm-up is counted before, not after.
          Thread.sleep(10_000);
          before = settledTransactions(admin, null);
          counting.reset();
          drive(guard, kind.equals("processed") ? "p" : "d", messages, threads);
        } finally {
          guard.close();
          pool.close(); // backends exit and flush what they have not yet reported
        }
        long[] after = settledTransactions(admin, before);
        rows.add(
            String.format(
                Locale.ROOT,
                "%-10s %7d %-9s %10.3f  transactions (server: %.3f commit, %.3f rollback);"
                    + " JDBC (client): %.3f executes, %.3f commits, %.3f rollbacks",
                "postgresql",
                threads,
                kind,
                (double) (after[0] - before[0] + after[1] - before[1]) / messages,
                (double) (after[0] - before[0]) / messages,
                (double) (after[1] - before[1]) / messages,
                counting.executes.doubleValue() / messages,
                counting.commits.doubleValue() / messages,
                counting.rollbacks.doubleValue() / messages));
      }
      try (HikariDataSource drop = endpoints.pool("rt-drop", url, 1);
          Connection c = drop.getConnection();
          Statement st = c.createStatement()) {
        st.execute("DROP TABLE IF EXISTS " + table);
      }
    }
  }

  private static IdempotencyGuard sqlGuard(javax.sql.DataSource dataSource, String table) {
    SqlLockBackend backend =
        SqlLockBackend.create(
            SqlLockSettings.newBuilder()
                .table(table)
                .createTableIfMissing(true)
                .dataSource(dataSource)
                .build());
    return IdempotencyGuard.newBuilder(backend).ttl(Duration.ofMinutes(10)).build();
  }

  private static void ensureDatabase(HikariDataSource admin) throws SQLException {
    try (Connection c = admin.getConnection();
        PreparedStatement exists =
            c.prepareStatement("SELECT 1 FROM pg_database WHERE datname = ?")) {
      exists.setString(1, DATABASE);
      try (ResultSet rs = exists.executeQuery()) {
        if (rs.next()) {
          return;
        }
      }
      try (Statement st = c.createStatement()) {
        st.execute("CREATE DATABASE " + DATABASE);
      } catch (SQLException e) {
        if (!"42P04".equals(e.getSQLState())) { // created meanwhile by another run
          throw e;
        }
      }
    }
  }

  /** xact_commit and xact_rollback of the benchmark's database, freshly read. */
  private static long[] transactions(HikariDataSource admin) throws SQLException {
    try (Connection c = admin.getConnection();
        Statement st = c.createStatement()) {
      st.execute("SELECT pg_stat_clear_snapshot()");
      try (PreparedStatement q =
          c.prepareStatement(
              "SELECT xact_commit, xact_rollback FROM pg_stat_database WHERE datname = ?")) {
        q.setString(1, DATABASE);
        try (ResultSet rs = q.executeQuery()) {
          rs.next();
          return new long[] {rs.getLong(1), rs.getLong(2)};
        }
      }
    }
  }

  /**
   * Reads until the counters stop moving for a second (and, unless {@code before} is null, have
   * moved past it): the backends have flushed what they had.
   */
  private static long[] settledTransactions(HikariDataSource admin, long[] before)
      throws SQLException, InterruptedException {
    long[] last = transactions(admin);
    for (int i = 0; i < 30; i++) {
      Thread.sleep(1000);
      long[] now = transactions(admin);
      if (Arrays.equals(now, last) && (before == null || !Arrays.equals(now, before))) {
        return now;
      }
      last = now;
    }
    return last;
  }

  // --------------------------------------------------------------- common

  /** Runs {@code messages} lock cycles on keys {@code name0..} over {@code threads} threads. */
  private static void drive(IdempotencyGuard guard, String name, int messages, int threads)
      throws Exception {
    AtomicInteger next = new AtomicInteger();
    AtomicReference<Exception> failure = new AtomicReference<>();
    List<Thread> workers = new ArrayList<>();
    for (int t = 0; t < threads; t++) {
      Thread w =
          new Thread(
              () -> {
                try {
                  for (int i = next.getAndIncrement(); i < messages; i = next.getAndIncrement()) {
                    guard.lock(name + i, ctx -> null);
                  }
                } catch (Exception e) {
                  failure.compareAndSet(null, e);
                }
              },
              "round-trip-" + t);
      workers.add(w);
      w.start();
    }
    for (Thread w : workers) {
      w.join();
    }
    if (failure.get() != null) {
      throw new IllegalStateException("lock cycles failed", failure.get());
    }
  }
}
