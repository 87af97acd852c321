package dev.pubsubworker.testservices;

import static dev.pubsubworker.testservices.AttemptResult.found;
import static dev.pubsubworker.testservices.AttemptResult.misconfigured;
import static dev.pubsubworker.testservices.AttemptResult.notConfigured;
import static dev.pubsubworker.testservices.AttemptResult.notHere;

import dev.pubsubworker.emulators.CloudEmulator;
import dev.pubsubworker.emulators.ManagedProcess;
import dev.pubsubworker.testservices.ServiceResolver.Step;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.BiFunction;

/**
 * Where Google's emulators can come from: their {@code *_EMULATOR_HOST} variable; the Google Cloud
 * CLI on this machine (the emulator started from {@code <sdk>/platform/...} on a free port, run by
 * this JVM's own Java, by {@link CloudEmulator}); a {@code google-cloud-cli:emulators} container.
 * There is no embedded source (an in-process Pub/Sub server is a separate facility).
 */
final class EmulatorSources {

  private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);

  private EmulatorSources() {}

  /** The service an emulator provides. */
  static ServiceKind kind(CloudEmulator emulator) {
    return switch (emulator) {
      case PUBSUB -> ServiceKind.PUBSUB_EMULATOR;
      case DATASTORE -> ServiceKind.DATASTORE_EMULATOR;
      case FIRESTORE -> ServiceKind.FIRESTORE_EMULATOR;
    };
  }

  /**
   * The steps for {@code emulator}; {@code wrap} turns an answering address into the service
   * object.
   */
  static <T> List<Step<T>> steps(
      CloudEmulator emulator, ServiceEnvironment env, BiFunction<HostPort, ServiceSource, T> wrap) {
    return List.of(
        new Step<>(ServiceSource.ENV_VAR, () -> fromVariable(emulator, env, wrap)),
        new Step<>(ServiceSource.LOCAL, () -> local(emulator, env, wrap)),
        new Step<>(ServiceSource.TESTCONTAINERS, () -> container(emulator, env, wrap)));
  }

  private static <T> AttemptResult<T> fromVariable(
      CloudEmulator emulator, ServiceEnvironment env, BiFunction<HostPort, ServiceSource, T> wrap) {
    String variable = kind(emulator).environmentVariable();
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
      CloudEmulator emulator, ServiceEnvironment env, BiFunction<HostPort, ServiceSource, T> wrap)
      throws IOException {
    Optional<Path> launcher = emulator.findLauncher(env.cloudSdkRoots());
    if (launcher.isEmpty()) {
      return notHere("no " + emulator.relativePath() + " under " + env.describeCloudSdkRoots());
    }
    Path binary = launcher.get();
    ManagedProcess process =
        ShutdownActions.stopAtExit(
            emulator.logName(), emulator.start(binary, env.workDir(), CloudEmulator.START_TIMEOUT));
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
      CloudEmulator emulator, ServiceEnvironment env, BiFunction<HostPort, ServiceSource, T> wrap) {
    if (!env.dockerAnswers()) {
      return notHere("no Docker engine answers");
    }
    HostPort address = env.containers().emulator(emulator);
    return found(
        wrap.apply(address, ServiceSource.TESTCONTAINERS),
        ContainerServices.CLOUD_CLI_IMAGE + " at " + address);
  }
}
