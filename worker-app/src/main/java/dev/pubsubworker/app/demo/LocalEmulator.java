package dev.pubsubworker.app.demo;

import java.io.IOException;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * One of Google's emulators from the Google Cloud CLI, started on a free loopback port for the
 * demo, with its output in a log file, stopped with its whole process tree on {@link #close()}.
 */
final class LocalEmulator implements AutoCloseable {

  /** The emulators the demo can start. */
  enum Kind {
    PUBSUB("Pub/Sub", "platform/pubsub-emulator/bin/cloud-pubsub-emulator", "pubsub-emulator"),
    DATASTORE(
        "Datastore",
        "platform/cloud-datastore-emulator/cloud_datastore_emulator",
        "cloud-datastore-emulator");

    final String title;
    final String relativePath;
    final String component;

    Kind(String title, String relativePath, String component) {
      this.title = title;
      this.relativePath = relativePath;
      this.component = component;
    }

    List<String> command(Path binary, int port) {
      return this == PUBSUB
          ? List.of(binary.toString(), "--host=127.0.0.1", "--port=" + port)
          : List.of(binary.toString(), "start", "--host=127.0.0.1", "--port=" + port, "--testing");
    }

    /** One line saying what to install. */
    String installHint() {
      return "no "
          + title
          + " emulator found: install the Google Cloud CLI's "
          + component
          + " (apt-get install google-cloud-cli-"
          + (this == PUBSUB ? "pubsub-emulator" : "datastore-emulator")
          + ", or gcloud components install "
          + component
          + (this == PUBSUB
              ? "), pass --pubsub HOST:PORT of a running one, or leave --pubsub out to use the"
                  + " embedded server"
              : "), or set DATASTORE_EMULATOR_HOST to a running one");
    }
  }

  private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

  private final Process process;
  private final String hostPort;
  private final Path log;

  private LocalEmulator(Process process, String hostPort, Path log) {
    this.process = process;
    this.hostPort = hostPort;
    this.log = log;
  }

  /** Where the emulator's launcher is, under the Cloud CLI roots this machine has. */
  static Optional<Path> find(Kind kind) {
    List<Path> roots = new ArrayList<>();
    String env = System.getenv("CLOUDSDK_ROOT_DIR");
    if (env != null && !env.isBlank()) {
      roots.add(Path.of(env));
    }
    roots.add(Path.of("/usr/lib/google-cloud-sdk"));
    roots.add(Path.of("/usr/share/google-cloud-sdk"));
    roots.add(Path.of(System.getProperty("user.home"), "google-cloud-sdk"));
    String path = System.getenv("PATH");
    if (path != null) {
      for (String dir : path.split(java.io.File.pathSeparator)) {
        Path gcloud = Path.of(dir, "gcloud");
        if (Files.isExecutable(gcloud)) {
          try {
            // gcloud lives in <root>/bin; follow a symlink from /usr/bin to the real install.
            roots.add(gcloud.toRealPath().getParent().getParent());
          } catch (IOException ignored) {
            // An unreadable link is just one root fewer.
          }
        }
      }
    }
    for (Path root : roots) {
      Path launcher = root.resolve(kind.relativePath);
      if (Files.isExecutable(launcher)) {
        return Optional.of(launcher);
      }
    }
    return Optional.empty();
  }

  /**
   * Starts the emulator at {@code binary} on a free port and waits until it answers.
   *
   * @throws IOException if it does not start or answer in time; the message names its log
   */
  static LocalEmulator start(Kind kind, Path binary, Path logDir) throws IOException {
    int port;
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = socket.getLocalPort();
    }
    Path log = logDir.resolve(kind.component + "-" + port + ".log");
    ProcessBuilder builder =
        new ProcessBuilder(kind.command(binary, port))
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    Path javaHome = Path.of(System.getProperty("java.home"));
    builder.environment().put("JAVA_HOME", javaHome.toString());
    builder.environment().put("JAVA", javaHome.resolve("bin").resolve("java").toString());
    Process process = builder.start();
    LocalEmulator emulator = new LocalEmulator(process, "127.0.0.1:" + port, log);
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IOException(kind.title + " emulator exited at start; see " + log);
      }
      if (answers(emulator.hostPort)) {
        return emulator;
      }
      try {
        TimeUnit.MILLISECONDS.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        emulator.close();
        throw new IOException("interrupted while waiting for the " + kind.title + " emulator", e);
      }
    }
    emulator.close();
    throw new IOException(
        kind.title + " emulator did not answer in " + START_TIMEOUT + "; see " + log);
  }

  /** Whether {@code GET http://hostPort/} answers 200, as Google's emulators do when up. */
  static boolean answers(String hostPort) {
    try {
      HttpURLConnection c =
          (HttpURLConnection) URI.create("http://" + hostPort + "/").toURL().openConnection();
      c.setConnectTimeout(1000);
      c.setReadTimeout(1000);
      try {
        return c.getResponseCode() == 200;
      } finally {
        c.disconnect();
      }
    } catch (IOException e) {
      return false;
    }
  }

  String hostPort() {
    return hostPort;
  }

  Path log() {
    return log;
  }

  /** Stops the emulator and every process it started. */
  @Override
  public void close() {
    List<ProcessHandle> tree = new ArrayList<>(process.descendants().toList());
    tree.add(process.toHandle());
    tree.forEach(ProcessHandle::destroy);
    for (ProcessHandle p : tree) {
      try {
        p.onExit().get(5, TimeUnit.SECONDS);
      } catch (Exception e) {
        p.destroyForcibly();
      }
    }
  }
}
