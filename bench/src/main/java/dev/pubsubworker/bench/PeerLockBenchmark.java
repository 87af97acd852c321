package dev.pubsubworker.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.pubsubworker.backend.redis.RedisLockBackend;
import dev.pubsubworker.backend.redis.RedisLockSettings;
import dev.pubsubworker.backend.sql.SqlLockBackend;
import dev.pubsubworker.backend.sql.SqlLockSettings;
import dev.pubsubworker.core.GuardListener;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.pubsub.micrometer.ReceiverMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;
import net.javacrumbs.shedlock.provider.redis.spring.RedisLockProvider;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.jdbc.core.JdbcTemplate;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The guard's lock cycle (claim + no-op work + complete on a fresh key) against its peers' lock +
 * unlock on a fresh name, on the same servers, at 1 and 8 threads, in interleaved rounds: on Redis,
 * ShedLock's Spring Data Redis provider (on Lettuce, one shared connection like the guard's) and
 * Redisson's {@code RLock} ({@code lock()} with its watchdog, {@code unlock()}); on PostgreSQL,
 * ShedLock's {@code JdbcTemplateLockProvider} ({@code usingDbTime()}, as its documentation
 * recommends). Even rounds run the contenders in reverse order, so that a drift of the machine
 * within a round favours none. It prints ops/s (min / median / max over the rounds) and the ratios
 * of the guard's median to each peer's; under each guard's rate, its claims and completes in that
 * round, the batches they went in and round trips per call, from the guard's metrics ({@link
 * StoreCalls}).
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar dev.pubsubworker.bench.PeerLockBenchmark \
 *     [--seconds 3] [--rounds 3] [--threads 1,8] [--stores redis,postgresql] [--latency-ms 0]
 * </pre>
 *
 * <p>{@code --latency-ms M} puts a relay ({@code TcpProxy} of worker-test-services, with latency)
 * between every contender and the servers that adds {@code M} ms each way, as a network would.
 *
 * <p>The guard runs with its defaults (lease 30 s, heartbeat on) and a 10-minute TTL; ShedLock
 * locks at most for 30 s and at least for nothing, so unlock frees the name at once. Each variant
 * has a pool of {@value #POOL} PostgreSQL connections. A warm-up round is not counted. Redis comes
 * from {@code REDIS_URL}, PostgreSQL from {@code POSTGRES_URL} ({@link Endpoints}); keys and tables
 * are deleted at the end.
 */
public final class PeerLockBenchmark {

  static final int POOL = 16;
  private static final Duration LOCK_AT_MOST = Duration.ofSeconds(30);

  /** One lock cycle on {@code name}. */
  @FunctionalInterface
  interface Cycle {
    void run(String name) throws Exception;
  }

  /** A contender: its label, its store, its cycle and what to close afterwards. */
  record Contender(String label, String store, Cycle cycle, AutoCloseable close) {}

  /**
   * The guard contenders' store-call metrics, by label, and what was printed of them so far: one
   * line under each guard's rate ({@link StoreCalls}).
   */
  private final java.util.Map<String, GuardCalls> guardCalls = new java.util.HashMap<>();

  /** One guard's metrics ({@link ReceiverMetrics} on a registry of its own) and their last read. */
  private static final class GuardCalls {
    final MeterRegistry registry = new SimpleMeterRegistry();
    final GuardListener listener;
    final java.util.Map<String, StoreCalls> printed = new java.util.HashMap<>();

    GuardCalls(String label) {
      ReceiverMetrics metrics = ReceiverMetrics.of(List.of(label));
      metrics.bindTo(registry);
      listener = metrics.guardListener(label);
    }

    /** Each verb's calls since the last report, on one line. */
    String reportSinceLast() {
      StringBuilder line = new StringBuilder();
      for (String verb : StoreCalls.VERBS) {
        StoreCalls now = StoreCalls.read(registry, verb);
        StoreCalls before = printed.getOrDefault(verb, new StoreCalls(0, 0, 0));
        printed.put(verb, now);
        line.append("  ").append(now.since(before).describe(verb));
      }
      return line.toString();
    }
  }

  /** The metrics of a guard contender, created under {@code label}. */
  private GuardCalls guardCalls(String label) {
    GuardCalls calls = new GuardCalls(label);
    guardCalls.put(label, calls);
    return calls;
  }

  private final String run = UUID.randomUUID().toString().substring(0, 8);
  private final Endpoints endpoints;

  /** Where the contenders reach the servers: {@link #endpoints}, or relays adding latency. */
  private final Endpoints stores;

  private final AtomicLong names = new AtomicLong();

  private PeerLockBenchmark(Endpoints endpoints, Duration oneWay) throws IOException {
    this.endpoints = endpoints;
    this.stores = endpoints.withLatency(oneWay);
  }

  /** Runs the benchmark; see the class comment. */
  @Command(
      name = "PeerLockBenchmark",
      description = "The guard against ShedLock and Redisson on private Redis and PostgreSQL.")
  static final class Options {
    @picocli.CommandLine.Mixin BenchOptions.Help help;

    @Option(names = "--seconds", description = "Seconds per contender per round (default 3).")
    int seconds = 3;

    @Option(names = "--rounds", description = "Interleaved rounds (default 3).")
    int rounds = 3;

    @Option(names = "--threads", split = ",", description = "Thread counts (default 1,8).")
    List<Integer> threads = List.of(1, 8);

    @Option(names = "--stores", split = ",", description = "redis, postgresql (default both).")
    List<String> stores = List.of("redis", "postgresql");

    @Option(names = "--latency-ms", description = "Added each way through a relay (default 0).")
    double latencyMs;

    @picocli.CommandLine.Mixin PrivateServers.Option servers = new PrivateServers.Option();
  }

  public static void main(String[] args) throws Exception {
    Options o = BenchOptions.parseOrExit(new Options(), args);
    Duration oneWay = Duration.ofNanos((long) (o.latencyMs * 1e6));
    try (PrivateServers servers =
        o.servers.start(o.stores.contains("redis"), o.stores.contains("postgresql"))) {
      new PeerLockBenchmark(servers.endpoints(Endpoints.fromEnvironment()), oneWay)
          .run(o.stores, o.threads, o.seconds, o.rounds, oneWay);
    }
  }

  private void run(
      List<String> stores, List<Integer> threadCounts, int seconds, int rounds, Duration oneWay)
      throws Exception {
    List<Contender> contenders = new ArrayList<>();
    try {
      if (stores.contains("redis")) {
        contenders.add(guardOnRedis(true));
        contenders.add(guardOnRedis(false));
        contenders.add(shedLockOnRedis());
        contenders.add(redisson());
      }
      if (stores.contains("postgresql")) {
        contenders.add(guardOnPostgres(true));
        contenders.add(guardOnPostgres(false));
        contenders.add(shedLockOnPostgres(false));
        contenders.add(shedLockOnPostgres(true));
      }
      System.out.printf(
          Locale.ROOT,
          "%d s per variant per round, %d rounds (+1 warm-up), %s ms added each way, load average"
              + " %s%n",
          seconds,
          rounds,
          oneWay.toNanos() / 1e6,
          Samples.loadAverage());
      for (int threads : threadCounts) {
        Samples ops = new Samples();
        Samples ratios = new Samples();
        for (int round = 0; round <= rounds; round++) {
          java.util.Map<String, Double> rates = new java.util.HashMap<>();
          // Odd rounds run the contenders in their listed order, even rounds in reverse, so that a
          // drift of the machine within a round (a vacuum, a checkpoint, a neighbour) favours none.
          List<Contender> order = new ArrayList<>(contenders);
          if (round % 2 == 0) {
            java.util.Collections.reverse(order);
          }
          for (Contender c : order) {
            double rate = measure(c, threads, seconds);
            System.out.printf(
                Locale.ROOT,
                "%2d threads %-8s %-20s %,10.0f ops/s%n",
                threads,
                round == 0 ? "warm-up" : "round " + round,
                c.label(),
                rate);
            GuardCalls calls = guardCalls.get(c.label());
            if (calls != null) {
              System.out.println("            store calls:" + calls.reportSinceLast());
            }
            if (round > 0) {
              ops.add(c.label(), rate);
              rates.put(c.label(), rate);
            }
          }
          if (round > 0) {
            roundRatio(ratios, rates, "guard redis", "guard redis unbatched");
            roundRatio(ratios, rates, "guard redis", "shedlock redis");
            roundRatio(ratios, rates, "guard postgresql", "guard postgresql unbatched");
            roundRatio(ratios, rates, "guard postgresql", "shedlock jdbc postgresql");
            roundRatio(ratios, rates, "guard postgresql", "shedlock postgresql");
          }
        }
        System.out.printf(
            Locale.ROOT,
            "%n%d threads, load average %s%n%-20s %10s %10s %10s%n",
            threads,
            Samples.loadAverage(),
            "variant",
            "min",
            "median",
            "max");
        for (String v : ops.variants()) {
          System.out.printf(
              Locale.ROOT,
              "%-20s %,10.0f %,10.0f %,10.0f%n",
              v,
              ops.min(v),
              ops.median(v),
              ops.max(v));
        }
        ratio(ops, threads, "guard redis", "shedlock redis");
        ratio(ops, threads, "guard redis", "redisson rlock");
        ratio(ops, threads, "guard postgresql", "shedlock postgresql");
        if (!ratios.variants().isEmpty()) {
          System.out.printf(
              Locale.ROOT,
              "%nratios per round at %d threads%n%-50s %6s %6s %6s%n",
              threads,
              "",
              "min",
              "median",
              "max");
          for (String v : ratios.variants()) {
            System.out.printf(
                Locale.ROOT,
                "%-50s %6.2f %6.2f %6.2f%n",
                v,
                ratios.min(v),
                ratios.median(v),
                ratios.max(v));
          }
        }
        System.out.println();
      }
    } finally {
      for (Contender c : contenders) {
        c.close().close();
      }
      cleanUp(stores);
    }
  }

  /** The ratio of one round's rates, under "ours / theirs", when both ran. */
  private static void roundRatio(
      Samples ratios, java.util.Map<String, Double> rates, String ours, String theirs) {
    if (rates.containsKey(ours) && rates.containsKey(theirs)) {
      ratios.add(ours + " / " + theirs, rates.get(ours) / rates.get(theirs));
    }
  }

  private static void ratio(Samples ops, int threads, String ours, String theirs) {
    if (ops.has(ours) && ops.has(theirs)) {
      System.out.printf(
          Locale.ROOT,
          "%s / %s at %d threads (medians): %.2f%n",
          ours,
          theirs,
          threads,
          ops.median(ours) / ops.median(theirs));
    }
  }

  /** Runs {@code c} on {@code threads} threads for {@code seconds}; returns cycles per second. */
  private double measure(Contender c, int threads, int seconds) throws Exception {
    LongAdder done = new LongAdder();
    AtomicReference<Exception> failure = new AtomicReference<>();
    CountDownLatch start = new CountDownLatch(1);
    List<Thread> workers = new ArrayList<>();
    long[] window = new long[2];
    for (int t = 0; t < threads; t++) {
      Thread w =
          new Thread(
              () -> {
                try {
                  start.await();
                  long end = window[1];
                  while (System.nanoTime() < end) {
                    c.cycle().run(run + "-" + names.incrementAndGet());
                    done.increment();
                  }
                } catch (Exception e) {
                  failure.compareAndSet(null, e);
                }
              },
              "peer-" + t);
      workers.add(w);
      w.start();
    }
    window[0] = System.nanoTime();
    window[1] = window[0] + TimeUnit.SECONDS.toNanos(seconds);
    start.countDown();
    for (Thread w : workers) {
      w.join();
    }
    long elapsed = System.nanoTime() - window[0];
    if (failure.get() != null) {
      throw new IllegalStateException(c.label() + " failed", failure.get());
    }
    return done.sum() / (elapsed / 1e9);
  }

  private Contender guardOnRedis(boolean batching) {
    String label = batching ? "guard redis" : "guard redis unbatched";
    GuardCalls calls = guardCalls(label);
    RedisLockBackend backend =
        RedisLockBackend.create(
            RedisLockSettings.newBuilder()
                .uri(stores.redisUri())
                .keyPrefix(redisPrefix() + "guard:")
                .build());
    backend.checkConnection();
    IdempotencyGuard guard =
        IdempotencyGuard.newBuilder(backend)
            .ttl(Duration.ofMinutes(10))
            .batching(batching)
            .listener(calls.listener)
            .build();
    return new Contender(
        label,
        "redis",
        name -> guard.lock(name, ctx -> null),
        () -> {
          guard.close();
          backend.close();
        });
  }

  private Contender shedLockOnRedis() {
    LettuceConnectionFactory factory =
        new LettuceConnectionFactory(
            LettuceConnectionFactory.createRedisConfiguration(stores.redisUri()),
            org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration
                .defaultConfiguration());
    factory.afterPropertiesSet();
    factory.start();
    RedisLockProvider provider =
        new RedisLockProvider.Builder(factory)
            .keyPrefix(redisPrefix() + "shedlock")
            .environment("bench")
            .build();
    return new Contender(
        "shedlock redis", "redis", name -> shedLockCycle(provider, name), factory::destroy);
  }

  private Contender redisson() {
    Config config = new Config();
    config.useSingleServer().setAddress(stores.redisUri());
    RedissonClient client = Redisson.create(config);
    String prefix = redisPrefix() + "redisson:";
    return new Contender(
        "redisson rlock",
        "redis",
        name -> {
          RLock lock = client.getLock(prefix + name);
          lock.lock();
          lock.unlock();
        },
        client::shutdown);
  }

  private Contender guardOnPostgres(boolean batching) {
    String label = batching ? "guard postgresql" : "guard postgresql unbatched";
    GuardCalls calls = guardCalls(label);
    HikariDataSource pool =
        stores.pool(batching ? "peer-guard" : "peer-guard-unbatched", stores.jdbcUrl(), POOL);
    SqlLockBackend backend =
        SqlLockBackend.create(
            SqlLockSettings.newBuilder()
                .table(guardTable())
                .createTableIfMissing(true)
                .dataSource(pool)
                .build());
    IdempotencyGuard guard =
        IdempotencyGuard.newBuilder(backend)
            .ttl(Duration.ofMinutes(10))
            .batching(batching)
            .listener(calls.listener)
            .build();
    return new Contender(
        label,
        "postgresql",
        name -> guard.lock(name, ctx -> null),
        () -> {
          guard.close();
          pool.close();
        });
  }

  /**
   * ShedLock on PostgreSQL: its plain {@code JdbcLockProvider} (two autocommit statements per
   * cycle) or, with {@code template}, its {@code JdbcTemplateLockProvider} (Spring's JdbcTemplate
   * and a transaction template, with the database's time).
   */
  private Contender shedLockOnPostgres(boolean template) throws Exception {
    HikariDataSource pool =
        stores.pool(
            template ? "peer-shedlock-template" : "peer-shedlock-jdbc", stores.jdbcUrl(), POOL);
    try (Connection c = pool.getConnection();
        Statement st = c.createStatement()) {
      // ShedLock's documented table.
      st.execute(
          "CREATE TABLE IF NOT EXISTS "
              + shedLockTable()
              + " (name VARCHAR(64) NOT NULL, lock_until TIMESTAMP NOT NULL,"
              + " locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL,"
              + " PRIMARY KEY (name))");
    }
    if (!template) {
      net.javacrumbs.shedlock.provider.jdbc.JdbcLockProvider plain =
          new net.javacrumbs.shedlock.provider.jdbc.JdbcLockProvider(pool, shedLockTable());
      return new Contender(
          "shedlock jdbc postgresql",
          "postgresql",
          name -> shedLockCycle(plain, name),
          pool::close);
    }
    JdbcTemplateLockProvider provider =
        new JdbcTemplateLockProvider(
            JdbcTemplateLockProvider.Configuration.builder()
                .withJdbcTemplate(new JdbcTemplate(pool))
                .withTableName(shedLockTable())
                .usingDbTime()
                .build());
    return new Contender(
        "shedlock postgresql", "postgresql", name -> shedLockCycle(provider, name), pool::close);
  }

  private static void shedLockCycle(
      net.javacrumbs.shedlock.core.LockProvider provider, String name) {
    Optional<SimpleLock> lock =
        provider.lock(new LockConfiguration(Instant.now(), name, LOCK_AT_MOST, Duration.ZERO));
    if (lock.isEmpty()) {
      throw new IllegalStateException("ShedLock refused a fresh name: " + name);
    }
    lock.get().unlock();
  }

  private String redisPrefix() {
    return "pwbench-peer:" + run + ":";
  }

  private String guardTable() {
    return "bench_peer_guard_" + run;
  }

  private String shedLockTable() {
    return "bench_peer_shedlock_" + run;
  }

  private void cleanUp(List<String> stores) throws Exception {
    if (stores.contains("redis")) {
      RedisKeys.deleteByPrefix(endpoints.redisUri(), redisPrefix());
    }
    if (stores.contains("postgresql")) {
      try (HikariDataSource ds = endpoints.pool("peer-cleanup", endpoints.jdbcUrl(), 1);
          Connection c = ds.getConnection();
          Statement st = c.createStatement()) {
        st.execute("DROP TABLE IF EXISTS " + guardTable());
        st.execute("DROP TABLE IF EXISTS " + shedLockTable());
      }
    }
  }
}
