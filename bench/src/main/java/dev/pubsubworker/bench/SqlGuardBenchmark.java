package dev.pubsubworker.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pubsubworker.backend.sql.SqlDialect;
import dev.pubsubworker.backend.sql.SqlLockBackend;
import dev.pubsubworker.backend.sql.SqlLockSettings;
import dev.pubsubworker.core.CallOptions;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.LockResult;
import java.net.URI;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The guard on the SQL backend: lock cycles (claim + work + complete on fresh keys), the duplicate
 * path (claim on a DONE key) and transactional-mode lock cycles, per database. Run it with {@code
 * -t 1}, {@code -t 8} and {@code -t 64}.
 *
 * <p>Endpoints come from the environment the tests read: {@code POSTGRES_URL} / {@code MARIADB_URL}
 * (a JDBC URL, or a {@code postgresql://user:password@host:port/db} / {@code mariadb://…} URI) with
 * {@code POSTGRES_USER}, {@code POSTGRES_PASSWORD}, {@code MARIADB_USER}, {@code MARIADB_PASSWORD};
 * the defaults are the local services ({@code postgres@127.0.0.1:5432/test}, {@code
 * root@127.0.0.1:3306/test}). H2 runs in memory. Each trial works on a table of its own, dropped
 * afterwards; the pool has {@value #POOL_SIZE} connections.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 3)
@Measurement(iterations = 3, time = 3)
@Fork(1)
@State(Scope.Benchmark)
public class SqlGuardBenchmark {

  static final int POOL_SIZE = 32;

  @Param({"POSTGRESQL", "MARIADB", "H2"})
  public String database;

  private final AtomicLong keys = new AtomicLong();
  private final String run = UUID.randomUUID().toString().substring(0, 8);
  private HikariDataSource dataSource;
  private String table;
  private IdempotencyGuard guard;
  private CallOptions transactional;

  @Setup(Level.Trial)
  public void setUp() {
    dataSource = pool(SqlDialect.valueOf(database));
    table = "bench_" + run;
    SqlLockBackend backend =
        SqlLockBackend.create(
            SqlLockSettings.newBuilder()
                .table(table)
                .createTableIfMissing(true)
                .dataSource(dataSource)
                .build());
    guard = IdempotencyGuard.newBuilder(backend).heartbeat(true).build();
    transactional = CallOptions.defaults().transactional(true);
    guard.lock("done", ctx -> null);
  }

  @TearDown(Level.Trial)
  public void tearDown() throws SQLException {
    guard.close();
    try (Connection c = dataSource.getConnection();
        Statement st = c.createStatement()) {
      st.execute("DROP TABLE " + table);
    } finally {
      dataSource.close();
    }
  }

  /** claim + work + complete on a fresh key: two statements' worth of round trips and more. */
  @Benchmark
  public LockResult<Long> lockCycle() {
    return guard.lock("k" + keys.incrementAndGet(), ctx -> ctx.fencingToken());
  }

  /** A redelivery: claim on a DONE key, answered AlreadyDone. */
  @Benchmark
  public LockResult<Long> duplicate() {
    return guard.lock("done", ctx -> ctx.fencingToken());
  }

  /** claim + (work and DONE in one transaction) on a fresh key, with an empty work. */
  @Benchmark
  public LockResult<Long> lockCycleTransactional() {
    return guard.lock("t" + keys.incrementAndGet(), transactional, ctx -> ctx.fencingToken());
  }

  private static HikariDataSource pool(SqlDialect dialect) {
    HikariConfig config = new HikariConfig();
    config.setPoolName("bench-" + dialect.name().toLowerCase());
    config.setMaximumPoolSize(POOL_SIZE);
    switch (dialect) {
      case POSTGRESQL ->
          endpoint(config, "POSTGRES", "jdbc:postgresql://127.0.0.1:5432/test", "postgres");
      case MARIADB -> endpoint(config, "MARIADB", "jdbc:mariadb://127.0.0.1:3306/test", "root");
      case H2 -> {
        config.setJdbcUrl("jdbc:h2:mem:bench;DB_CLOSE_DELAY=-1");
        config.setUsername("sa");
      }
      default -> throw new IllegalArgumentException("no benchmark for " + dialect);
    }
    return new HikariDataSource(config);
  }

  private static void endpoint(
      HikariConfig config, String prefix, String defaultUrl, String defaultUser) {
    String url = System.getenv().getOrDefault(prefix + "_URL", defaultUrl);
    String user = System.getenv().getOrDefault(prefix + "_USER", defaultUser);
    String password = System.getenv().getOrDefault(prefix + "_PASSWORD", "");
    if (!url.startsWith("jdbc:")) {
      URI uri = URI.create(url);
      String scheme = prefix.equals("POSTGRES") ? "postgresql" : "mariadb";
      if (uri.getUserInfo() != null) {
        String[] parts = uri.getUserInfo().split(":", 2);
        user = parts[0];
        password = parts.length > 1 ? parts[1] : password;
      }
      url =
          "jdbc:"
              + scheme
              + "://"
              + uri.getHost()
              + (uri.getPort() > 0 ? ":" + uri.getPort() : "")
              + uri.getPath();
    }
    config.setJdbcUrl(url);
    config.setUsername(user);
    if (!password.isEmpty()) {
      config.setPassword(password);
    }
  }
}
