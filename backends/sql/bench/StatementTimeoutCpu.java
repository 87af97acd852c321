import com.sun.management.OperatingSystemMXBean;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.LockBackend;
import java.io.File;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * Client (and PostgreSQL backend) CPU per store call of several builds of the SQL backend, side by
 * side in one JVM: each build's classes in a class loader of their own over the same dependencies,
 * one shared HikariCP pool of one connection (so one server backend), interleaved rounds. See
 * statement-timeout-cpu.sh.
 *
 * <p>Args: url user duplicates cycles rounds label=classesDir...
 */
public final class StatementTimeoutCpu {

  private static final OperatingSystemMXBean OS =
      (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();
  private static final Duration LEASE = Duration.ofSeconds(30);
  private static final Duration TTL = Duration.ofMinutes(10);

  record Variant(String label, LockBackend backend, String table) {}

  record Sample(double processUs, double callerUs, double serverUs, double wallUs) {}

  public static void main(String[] args) throws Exception {
    String url = args[0];
    String user = args[1];
    int duplicates = Integer.parseInt(args[2]);
    int cycles = Integer.parseInt(args[3]);
    int rounds = Integer.parseInt(args[4]);
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(url);
    config.setUsername(user);
    config.setMaximumPoolSize(1);
    config.setMinimumIdle(1);
    // The commit's fsync is server wait, not CPU: leave it out so that the loop is CPU-bound.
    config.setConnectionInitSql("SET synchronous_commit = off");
    List<Variant> variants = new ArrayList<>();
    try (HikariDataSource pool = new HikariDataSource(config)) {
      int pid;
      try (Connection c = pool.getConnection();
          Statement s = c.createStatement();
          ResultSet rs = s.executeQuery("SELECT pg_backend_pid()")) {
        rs.next();
        pid = rs.getInt(1);
      }
      for (int i = 5; i < args.length; i++) {
        String[] lv = args[i].split("=", 2);
        variants.add(load(lv[0], Path.of(lv[1]), pool));
      }
      int n = variants.size();
      List<List<Sample>> dup = new ArrayList<>();
      List<List<Sample>> cyc = new ArrayList<>();
      for (int v = 0; v < n; v++) {
        dup.add(new ArrayList<>());
        cyc.add(new ArrayList<>());
      }
      for (int round = 0; round <= rounds; round++) {
        for (int k = 0; k < n; k++) {
          int v = round % 2 == 0 ? k : n - 1 - k; // alternate the order
          Variant var = variants.get(v);
          Sample d = duplicates(var.backend(), duplicates, pid);
          Sample c = cycles(var.backend(), cycles, pid);
          System.out.printf(
              Locale.ROOT,
              "round %d %-8s duplicate: process %6.1f  caller %6.1f  server %6.1f  wall %6.1f us/call"
                  + " | cycle: process %6.1f  caller %6.1f  server %6.1f  wall %6.1f us/cycle%s%n",
              round, var.label(), d.processUs(), d.callerUs(), d.serverUs(), d.wallUs(),
              c.processUs(), c.callerUs(), c.serverUs(), c.wallUs(), round == 0 ? " (warm-up)" : "");
          if (round > 0) {
            dup.get(v).add(d);
            cyc.get(v).add(c);
          }
        }
      }
      System.out.println();
      System.out.println("medians over " + rounds + " rounds (us per call; ratio to " + variants.get(0).label() + "):");
      for (String kind : List.of("duplicate", "cycle")) {
        List<List<Sample>> all = kind.equals("duplicate") ? dup : cyc;
        double[] base = medians(all.get(0));
        for (int v = 0; v < n; v++) {
          double[] m = medians(all.get(v));
          System.out.printf(
              Locale.ROOT,
              "%-9s %-8s process %6.1f (%.2f)  caller %6.1f (%.2f)  server %6.1f (%.2f)  wall %6.1f (%.2f)%n",
              kind, variants.get(v).label(), m[0], m[0] / base[0], m[1], m[1] / base[1], m[2],
              m[2] / base[2], m[3], m[3] / base[3]);
        }
      }
      try (Connection c = pool.getConnection();
          Statement s = c.createStatement()) {
        for (Variant v : variants) {
          s.execute("DROP TABLE " + v.table());
        }
      }
    }
  }

  private static Variant load(String label, Path classes, DataSource ds) throws Exception {
    URLClassLoader loader =
        new URLClassLoader(
            new URL[] {classes.toUri().toURL()}, StatementTimeoutCpu.class.getClassLoader());
    Class<?> settingsClass = loader.loadClass("dev.pubsubworker.backend.sql.SqlLockSettings");
    Class<?> backendClass = loader.loadClass("dev.pubsubworker.backend.sql.SqlLockBackend");
    Object b = settingsClass.getMethod("newBuilder").invoke(null);
    Class<?> bc = b.getClass();
    String table = "pw_sto_cpu_" + label.replaceAll("[^a-z0-9]", "") + "_" + UUID.randomUUID().toString().substring(0, 6);
    bc.getMethod("dataSource", DataSource.class).invoke(b, ds);
    bc.getMethod("table", String.class).invoke(b, table);
    bc.getMethod("createTableIfMissing", boolean.class).invoke(b, true);
    Object settings = bc.getMethod("build").invoke(b);
    LockBackend backend = (LockBackend) backendClass.getMethod("create", settingsClass).invoke(null, settings);
    // A table with rows and statistics, as in production: on a never-analyzed table (the local
    // server runs without autovacuum) the planner may pick the expires_at index for the updates
    // and scan every row, which would swamp what this measures.
    try (Connection c = ds.getConnection();
        Statement s = c.createStatement()) {
      s.execute(
          "INSERT INTO " + table + " (lock_key, state, fence, lease_expiry, expires_at)"
              + " SELECT 'filler-' || g, 'DONE', 1, 0, 0 FROM generate_series(1, 20000) g");
      s.execute("ANALYZE " + table);
    }
    return new Variant(label, backend, table);
  }

  /** Claims on one DONE key: one read-only statement each. */
  private static Sample duplicates(LockBackend backend, int n, int pid) throws Exception {
    String key = "dup-" + UUID.randomUUID();
    Claim claim = ((ClaimResult.Won) backend.claim(ClaimRequest.of(key, LEASE, token()))).claim();
    backend.complete(claim, TTL);
    ClaimRequest again = ClaimRequest.of(key, LEASE, token());
    return measure(n, pid, () -> {
      if (!(backend.claim(again) instanceof ClaimResult.AlreadyDone)) {
        throw new IllegalStateException("not a duplicate");
      }
    });
  }

  /** Claim + complete on fresh keys: two statements, two commits. */
  private static Sample cycles(LockBackend backend, int n, int pid) throws Exception {
    String prefix = "cyc-" + UUID.randomUUID() + "-";
    int[] i = {0};
    return measure(n, pid, () -> {
      Claim c = ((ClaimResult.Won) backend.claim(ClaimRequest.of(prefix + i[0]++, LEASE, token()))).claim();
      if (!backend.complete(c, TTL)) {
        throw new IllegalStateException("not completed");
      }
    });
  }

  interface Call {
    void run() throws Exception;
  }

  private static Sample measure(int n, int pid, Call call) throws Exception {
    long server0 = serverTicks(pid);
    long process0 = OS.getProcessCpuTime();
    long caller0 = THREADS.getCurrentThreadCpuTime();
    long wall0 = System.nanoTime();
    for (int k = 0; k < n; k++) {
      call.run();
    }
    long wall = System.nanoTime() - wall0;
    long caller = THREADS.getCurrentThreadCpuTime() - caller0;
    long process = OS.getProcessCpuTime() - process0;
    long server = serverTicks(pid) - server0;
    return new Sample(
        process / 1e3 / n, caller / 1e3 / n, server * 1e6 / 100 / n, wall / 1e3 / n);
  }

  /** The server backend's utime + stime in clock ticks (USER_HZ = 100). */
  private static long serverTicks(int pid) throws Exception {
    String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    return Long.parseLong(f[11]) + Long.parseLong(f[12]);
  }

  private static double[] medians(List<Sample> s) {
    return new double[] {
      median(s.stream().mapToDouble(Sample::processUs).toArray()),
      median(s.stream().mapToDouble(Sample::callerUs).toArray()),
      median(s.stream().mapToDouble(Sample::serverUs).toArray()),
      median(s.stream().mapToDouble(Sample::wallUs).toArray())
    };
  }

  private static double median(double[] v) {
    Arrays.sort(v);
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
  }

  private static String token() {
    return UUID.randomUUID().toString();
  }
}
