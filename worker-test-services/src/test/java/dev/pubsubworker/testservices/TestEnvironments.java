package dev.pubsubworker.testservices;

import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/** Injected environments for resolution tests: no real env vars are read or changed. */
final class TestEnvironments {

  /** Report lines printed by environments built here. */
  final List<String> reported = new CopyOnWriteArrayList<>();

  private final Map<String, String> variables = new HashMap<>();
  private ServiceEnvironment.LocalPorts localPorts = ServiceEnvironment.LocalPorts.DEFAULT;
  private boolean docker;
  private ContainerStarter containers = RecordingContainers.refusing();

  TestEnvironments(Path workDir) {
    variables.put(ServiceEnvironment.WORK_DIR_VARIABLE, workDir.toString());
    variables.put("PATH", "");
    variables.put("HOME", workDir.toString());
  }

  TestEnvironments set(String name, String value) {
    variables.put(name, value);
    return this;
  }

  /** Hides every Cloud CLI: the only root looked at is a folder that does not exist. */
  TestEnvironments hideCloudSdk(Path missing) {
    return set(ServiceEnvironment.CLOUD_SDK_VARIABLE, missing.toString());
  }

  /** Points every local default at ports where nothing listens. */
  TestEnvironments closeLocalPorts() throws IOException {
    localPorts =
        new ServiceEnvironment.LocalPorts("127.0.0.1", closedPort(), closedPort(), closedPort());
    return this;
  }

  TestEnvironments docker(boolean answers) {
    docker = answers;
    return this;
  }

  /** What the Testcontainers source starts once Docker answers (default: refuses every call). */
  TestEnvironments containers(ContainerStarter starter) {
    containers = starter;
    return this;
  }

  ServiceEnvironment build() {
    boolean dockerAnswers = docker;
    return new ServiceEnvironment(
        variables, localPorts, () -> dockerAnswers, containers, reported::add);
  }

  ServiceRegistry registry() {
    return new ServiceRegistry(build());
  }

  /** A loopback port that was free a moment ago, so nothing answers there. */
  static int closedPort() throws IOException {
    return Probes.freeLoopbackPort();
  }
}
