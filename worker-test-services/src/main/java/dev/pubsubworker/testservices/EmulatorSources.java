package dev.pubsubworker.testservices;

import static dev.pubsubworker.testservices.AttemptResult.found;
import static dev.pubsubworker.testservices.AttemptResult.misconfigured;
import static dev.pubsubworker.testservices.AttemptResult.notConfigured;
import static dev.pubsubworker.testservices.AttemptResult.notHere;

import dev.pubsubworker.testservices.ServiceResolver.Step;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.BiFunction;
import java.util.function.IntFunction;

/**
 * Where Google's emulators can come from: their {@code *_EMULATOR_HOST} variable; the Google Cloud
 * CLI on this machine (the emulator started from {@code <sdk>/platform/...} on a free port, run by
 * this JVM's own Java); a {@code google-cloud-cli:emulators} container. There is no embedded source
 * (an in-process Pub/Sub server is a separate facility).
 */
final class EmulatorSources {

  /** How long an emulator may take to answer; JVM emulators on 2 busy cores need a margin. */
  static final Duration START_TIMEOUT = Duration.ofSeconds(90);

  private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);

  /** The emulators and how to start each from the Cloud CLI. */
  enum Emulator {
    PUBSUB(
        ServiceKind.PUBSUB_EMULATOR,
        "pubsub-emulator",
        "platform/pubsub-emulator/bin/cloud-pubsub-emulator") {
      @Override
      List<String> command(Path binary, int port) {
        return List.of(binary.toString(), "--host=127.0.0.1", "--port=" + port);
      }
    },
    DATASTORE(
        ServiceKind.DATASTORE_EMULATOR,
        "datastore-emulator",
        "platform/cloud-datastore-emulator/cloud_datastore_emulator") {
      @Override
      List<String> command(Path binary, int port) {
        // --testing: in memory, strongly consistent, nothing written to disk.
        return List.of(
            binary.toString(), "start", "--host=127.0.0.1", "--port=" + port, "--testing");
      }
    },
    FIRESTORE(
        ServiceKind.FIRESTORE_EMULATOR,
        "firestore-emulator",
        "platform/cloud-firestore-emulator/cloud_firestore_emulator") {
      @Override
      List<String> command(Path binary, int port) {
        return List.of(
            binary.toString(),
            "--database-mode=datastore-mode",
            "--host=127.0.0.1",
            "--port=" + port);
      }
    };

    private final ServiceKind kind;
    private final String logName;
    private final String relativePath;

    Emulator(ServiceKind kind, String logName, String relativePath) {
      this.kind = kind;
      this.logName = logName;
      this.relativePath = relativePath;
    }

    abstract List<String> command(Path binary, int port);

    ServiceKind kind() {
      return kind;
    }

    /** Where the launcher lies under a Cloud CLI root. */
    String relativePath() {
      return relativePath;
    }
  }

  private EmulatorSources() {}

  /**
   * The steps for {@code emulator}; {@code wrap} turns an answering address into the service
   * object.
   */
  static <T> List<Step<T>> steps(
      Emulator emulator, ServiceEnvironment env, BiFunction<HostPort, ServiceSource, T> wrap) {
    return List.of(
        new Step<>(ServiceSource.ENV_VAR, () -> fromVariable(emulator, env, wrap)),
        new Step<>(ServiceSource.LOCAL, () -> local(emulator, env, wrap)),
        new Step<>(ServiceSource.TESTCONTAINERS, () -> container(emulator, env, wrap)));
  }

  /** The first Cloud CLI root that holds the emulator's launcher. */
  static Optional<Path> findLauncher(Emulator emulator, ServiceEnvironment env) {
    for (Path root : env.cloudSdkRoots()) {
      Path launcher = root.resolve(emulator.relativePath());
      if (Files.isRegularFile(launcher) && Files.isExecutable(launcher)) {
        return Optional.of(launcher);
      }
    }
    return Optional.empty();
  }

  private static <T> AttemptResult<T> fromVariable(
      Emulator emulator, ServiceEnvironment env, BiFunction<HostPort, ServiceSource, T> wrap) {
    String variable = emulator.kind().environmentVariable();
    String value = env.variable(variable).orElse(null);
    if (value == null) {
      return notConfigured();
    }
    HostPort address;
    try {
      address = HostPort.parse(value);
    } catch (IllegalArgumentException e) {
      return misconfigured(variable + ": " + e.getMessage());
    }
    try {
      Probes.httpOk(address, PROBE_TIMEOUT);
    } catch (IOException e) {
      return misconfigured(
          variable
              + "="
              + value
              + " does not answer ("
              + ServiceResolver.describe(e)
              + "): start the emulator there or unset "
              + variable);
    }
    return found(wrap.apply(address, ServiceSource.ENV_VAR), variable + "=" + address);
  }

  private static <T> AttemptResult<T> local(
      Emulator emulator, ServiceEnvironment env, BiFunction<HostPort, ServiceSource, T> wrap)
      throws IOException {
    Optional<Path> launcher = findLauncher(emulator, env);
    if (launcher.isEmpty()) {
      return notHere("no " + emulator.relativePath() + " under " + env.describeCloudSdkRoots());
    }
    Path binary = launcher.get();
    IntFunction<List<String>> command = port -> emulator.command(binary, port);
    ManagedProcess process =
        ManagedProcess.start(
            emulator.logName,
            env.workDir(),
            command,
            javaEnvironment(),
            port -> Probes.httpOk(HostPort.loopback(port), PROBE_TIMEOUT),
            START_TIMEOUT);
    HostPort address = HostPort.loopback(process.port());
    return found(
        wrap.apply(address, ServiceSource.LOCAL),
        binary
            + " at "
            + address
            + " (pid "
            + process.pid()
            + "), up in "
            + Seconds.format(process.startupTime())
            + ", log "
            + process.logFile());
  }

  private static <T> AttemptResult<T> container(
      Emulator emulator, ServiceEnvironment env, BiFunction<HostPort, ServiceSource, T> wrap) {
    if (!env.dockerAnswers()) {
      return notHere("no Docker engine answers");
    }
    HostPort address = env.containers().emulator(emulator);
    return found(
        wrap.apply(address, ServiceSource.TESTCONTAINERS),
        ContainerServices.CLOUD_CLI_IMAGE + " at " + address);
  }

  /**
   * The emulators are Java programs whose launchers use {@code JAVA_HOME} or {@code JAVA}: point
   * both at this JVM's Java, which is known to be new enough, rather than whatever the shell has.
   */
  private static Map<String, String> javaEnvironment() {
    Path javaHome = Path.of(System.getProperty("java.home"));
    return Map.of(
        "JAVA_HOME",
        javaHome.toString(),
        "JAVA",
        javaHome.resolve("bin").resolve("java").toString());
  }
}
