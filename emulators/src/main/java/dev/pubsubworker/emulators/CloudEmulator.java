package dev.pubsubworker.emulators;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Google's emulators as the Google Cloud CLI installs them: where each one's launcher lies under a
 * Cloud CLI root, its command line, and how to start it on a free loopback port as a {@link
 * ManagedProcess}.
 */
public enum CloudEmulator {
  /** The Pub/Sub emulator. */
  PUBSUB("pubsub-emulator", "platform/pubsub-emulator/bin/cloud-pubsub-emulator") {
    @Override
    public List<String> command(Path launcher, int port) {
      return List.of(launcher.toString(), "--host=127.0.0.1", "--port=" + port);
    }
  },
  /**
   * The Datastore emulator, in memory ({@code --testing}: strongly consistent, nothing on disk).
   */
  DATASTORE("datastore-emulator", "platform/cloud-datastore-emulator/cloud_datastore_emulator") {
    @Override
    public List<String> command(Path launcher, int port) {
      return List.of(
          launcher.toString(), "start", "--host=127.0.0.1", "--port=" + port, "--testing");
    }
  },
  /** The Firestore emulator in Datastore mode. */
  FIRESTORE("firestore-emulator", "platform/cloud-firestore-emulator/cloud_firestore_emulator") {
    @Override
    public List<String> command(Path launcher, int port) {
      return List.of(
          launcher.toString(),
          "--database-mode=datastore-mode",
          "--host=127.0.0.1",
          "--port=" + port);
    }
  };

  /**
   * A start timeout for {@link #start} that fits every emulator here: 90 s, since these JVM
   * programs on a busy machine can take far longer than their usual few seconds.
   */
  public static final Duration START_TIMEOUT = Duration.ofSeconds(90);

  private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);

  private final String logName;
  private final String relativePath;

  CloudEmulator(String logName, String relativePath) {
    this.logName = logName;
    this.relativePath = relativePath;
  }

  /**
   * The command line that starts the emulator at {@code launcher} serving on {@code
   * 127.0.0.1:port}.
   */
  public abstract List<String> command(Path launcher, int port);

  /** Where the launcher lies under a Cloud CLI root, e.g. {@code platform/pubsub-emulator/...}. */
  public String relativePath() {
    return relativePath;
  }

  /** The file-name-safe name its log and error messages use, e.g. {@code pubsub-emulator}. */
  public String logName() {
    return logName;
  }

  /**
   * The launcher under the first of {@code roots} that holds it as an executable regular file.
   *
   * @param roots Cloud CLI roots, most specific first (see {@link CloudSdk#roots})
   */
  public Optional<Path> findLauncher(List<Path> roots) {
    for (Path root : roots) {
      Path launcher = root.resolve(relativePath);
      if (Files.isRegularFile(launcher) && Files.isExecutable(launcher)) {
        return Optional.of(launcher);
      }
    }
    return Optional.empty();
  }

  /**
   * Starts the emulator at {@code launcher} on a free loopback port and waits until {@code GET /}
   * answers HTTP 200. The launchers are scripts that run Java from {@code JAVA_HOME} or {@code
   * JAVA}: both are set to this JVM's Java, known to be new enough, rather than whatever the shell
   * has. The caller owns the process and must close it.
   *
   * @param launcher the launcher, e.g. from {@link #findLauncher}
   * @param workDir where the log ({@code <logName>-<port>.log}) goes; created if missing
   * @param timeout how long the emulator may take to answer (see {@link #START_TIMEOUT})
   * @throws IOException when it cannot start, exits early or does not answer within {@code
   *     timeout}; the message names the log (see {@link ManagedProcess#start})
   */
  public ManagedProcess start(Path launcher, Path workDir, Duration timeout) throws IOException {
    Path javaHome = Path.of(System.getProperty("java.home"));
    Map<String, String> java =
        Map.of(
            "JAVA_HOME",
            javaHome.toString(),
            "JAVA",
            javaHome.resolve("bin").resolve("java").toString());
    return ManagedProcess.start(
        logName,
        workDir,
        port -> command(launcher, port),
        java,
        port -> Probes.httpOk("127.0.0.1:" + port, PROBE_TIMEOUT),
        timeout);
  }
}
