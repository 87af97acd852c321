package dev.pubsubworker.bench;

import dev.pubsubworker.emulators.ManagedProcess;
import dev.pubsubworker.emulators.Probes;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A Redis server and a PostgreSQL cluster of one benchmark run's own, on unused loopback ports, so
 * that no other client's commands, statements or caches count in what the run measures (a shared
 * server's {@code INFO commandstats}, CPU and buffer cache are everyone's). Redis is {@code
 * redis-server} from the {@code PATH}, with no persistence, as the CI machine's; PostgreSQL is a
 * new cluster made by {@code initdb} (from {@code PG_BIN}, else the newest {@code
 * /usr/lib/postgresql/N/bin}) in a temporary folder, trust authentication on loopback, fsync on, as
 * a server's defaults have it; run as user {@code postgres} through {@code runuser} when this
 * process is root (PostgreSQL refuses to run as root). {@link #close} stops both and deletes the
 * folders; so does a shutdown hook, if the run ends otherwise.
 *
 * <p>Start-up fails with an {@link IOException} that names the missing program or the server's log
 * when a server cannot be started; nothing is left running then.
 */
final class PrivateServers implements AutoCloseable {

  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

  /** {@code --private-servers}, mixed into the options of the benchmarks that use stores. */
  static final class Option {
    @picocli.CommandLine.Option(
        names = "--private-servers",
        description =
            "Start a Redis server and a PostgreSQL cluster of this run's own (unused ports,"
                + " stopped at the end) instead of REDIS_URL and POSTGRES_URL.")
    boolean requested;

    /**
     * The servers asked for, when the option is given, started, with their {@link #description}
     * printed; otherwise none, whose {@link #endpoints} are the ones given.
     */
    PrivateServers start(boolean redis, boolean postgres) throws IOException {
      PrivateServers servers = PrivateServers.start(requested && redis, requested && postgres);
      if (servers.redisUri != null || servers.jdbcUrl != null) {
        System.out.println(servers.description());
      }
      return servers;
    }
  }

  private final List<Runnable> stops = new ArrayList<>();
  private final Thread hook = new Thread(this::stopAll, "private-servers-stop");
  private String redisUri;
  private String jdbcUrl;
  private String description = "";

  private PrivateServers() {}

  /** Starts the servers asked for; see the class comment. */
  static PrivateServers start(boolean redis, boolean postgres) throws IOException {
    PrivateServers s = new PrivateServers();
    Runtime.getRuntime().addShutdownHook(s.hook);
    try {
      List<String> started = new ArrayList<>();
      if (redis) {
        started.add(s.startRedis());
      }
      if (postgres) {
        started.add(s.startPostgres());
      }
      s.description = "private servers: " + String.join("; ", started);
      return s;
    } catch (IOException | RuntimeException e) {
      s.close();
      throw e;
    }
  }

  /** {@code base} with the private servers in place of the ones it names. */
  Endpoints endpoints(Endpoints base) {
    Endpoints e = base;
    if (redisUri != null) {
      e = e.withRedis(redisUri);
    }
    if (jdbcUrl != null) {
      e = new Endpoints(e.redisUri(), jdbcUrl, "postgres", "");
    }
    return e;
  }

  /** One line: what runs where. */
  String description() {
    return description;
  }

  @Override
  public void close() {
    stopAll();
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException shuttingDown) {
      // the hook runs or has run: nothing left to stop
    }
  }

  private synchronized void stopAll() {
    for (int i = stops.size() - 1; i >= 0; i--) {
      try {
        stops.get(i).run();
      } catch (RuntimeException e) {
        System.err.println("stopping a private server: " + e);
      }
    }
    stops.clear();
  }

  private String startRedis() throws IOException {
    Path dir = Files.createTempDirectory("pubsub-worker-bench-redis");
    stops.add(() -> deleteTree(dir));
    ManagedProcess redis =
        ManagedProcess.start(
            "redis-server",
            dir,
            port ->
                List.of(
                    "redis-server",
                    "--port",
                    Integer.toString(port),
                    "--bind",
                    "127.0.0.1",
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--dir",
                    dir.toString()),
            Map.of(),
            PrivateServers::redisPing,
            START_TIMEOUT);
    stops.add(redis::close);
    redisUri = "redis://127.0.0.1:" + redis.port();
    return "redis-server on 127.0.0.1:" + redis.port();
  }

  /** Answers when the server on {@code port} replies +PONG to PING. */
  private static void redisPing(int port) throws IOException {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 1000);
      s.setSoTimeout(1000);
      s.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
      byte[] reply = s.getInputStream().readNBytes(5);
      if (!"+PONG".equals(new String(reply, StandardCharsets.US_ASCII))) {
        throw new IOException("no +PONG yet");
      }
    }
  }

  private String startPostgres() throws IOException {
    Path bin = postgresBin();
    Path dir = Files.createTempDirectory("pubsub-worker-bench-pg");
    stops.add(() -> deleteTree(dir));
    Path data = dir.resolve("data");
    Path log = dir.resolve("postgres.log");
    List<String> as = asPostgresUser(dir);
    run(
        concat(
            as,
            bin.resolve("initdb").toString(),
            "-D",
            data.toString(),
            "-A",
            "trust",
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--no-sync"),
        "initdb");
    int port = Probes.freeLoopbackPort();
    List<String> pgCtl = concat(as, bin.resolve("pg_ctl").toString(), "-D", data.toString());
    run(
        concat(
            pgCtl,
            "-l",
            log.toString(),
            "-w",
            "-t",
            Long.toString(START_TIMEOUT.toSeconds()),
            "-o",
            "-p " + port + " -k " + dir + " -c listen_addresses=127.0.0.1",
            "start"),
        "pg_ctl start (log: " + log + ")");
    stops.add(
        () -> {
          try {
            run(concat(pgCtl, "-m", "immediate", "stop"), "pg_ctl stop");
          } catch (IOException e) {
            throw new UncheckedIOException(e);
          }
        });
    jdbcUrl = "jdbc:postgresql://127.0.0.1:" + port + "/postgres";
    return "PostgreSQL (" + bin + ") on 127.0.0.1:" + port;
  }

  /** The PostgreSQL programs' folder; see the class comment. */
  private static Path postgresBin() throws IOException {
    String env = System.getenv("PG_BIN");
    if (env != null && !env.isBlank()) {
      return Paths.get(env);
    }
    Path root = Paths.get("/usr/lib/postgresql");
    if (Files.isDirectory(root)) {
      try (Stream<Path> versions = Files.list(root)) {
        Path newest =
            versions
                .filter(v -> Files.isExecutable(v.resolve("bin/initdb")))
                .max(Comparator.comparing(PrivateServers::version))
                .orElse(null);
        if (newest != null) {
          return newest.resolve("bin");
        }
      }
    }
    throw new IOException(
        "no initdb found: set PG_BIN to the folder of PostgreSQL's initdb and pg_ctl");
  }

  private static int version(Path versionDir) {
    try {
      return Integer.parseInt(versionDir.getFileName().toString().replaceAll("\\D.*", ""));
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /** The command prefix that runs PostgreSQL's programs; chowns {@code dir} when root. */
  private static List<String> asPostgresUser(Path dir) throws IOException {
    if (!"root".equals(System.getProperty("user.name"))) {
      return List.of();
    }
    run(List.of("chown", "postgres", dir.toString()), "chown postgres (PostgreSQL refuses root)");
    return List.of("runuser", "-u", "postgres", "--");
  }

  private static List<String> concat(List<String> prefix, String... rest) {
    List<String> all = new ArrayList<>(prefix);
    all.addAll(List.of(rest));
    return all;
  }

  /** Runs {@code command} to its end; its output is in the exception if it fails. */
  private static void run(List<String> command, String what) throws IOException {
    Process p;
    try {
      p = new ProcessBuilder(command).redirectErrorStream(true).start();
    } catch (IOException e) {
      throw new IOException("cannot run " + what + ": " + e.getMessage(), e);
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    try {
      if (!p.waitFor(START_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IOException(what + " did not end within " + START_TIMEOUT.toSeconds() + " s");
      }
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while running " + what, e);
    }
    if (p.exitValue() != 0) {
      throw new IOException(
          String.format(Locale.ROOT, "%s failed (exit %d): %s", what, p.exitValue(), out.strip()));
    }
  }

  private static void deleteTree(Path dir) {
    try (Stream<Path> all = Files.walk(dir)) {
      all.sorted(Comparator.reverseOrder())
          .forEach(
              f -> {
                try {
                  Files.deleteIfExists(f);
                } catch (IOException e) {
                  throw new UncheckedIOException(e);
                }
              });
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
