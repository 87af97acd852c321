package dev.pubsubworker.testservices;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Whether a Docker engine answers, asked of Testcontainers only when there is a sign of one (a
 * {@code DOCKER_HOST}, a Testcontainers configuration or a known socket file), so that a machine
 * without Docker pays nothing and logs nothing.
 */
final class DockerProbe {

  private DockerProbe() {}

  /** Whether Testcontainers reaches a Docker engine. */
  static boolean dockerAnswers(Map<String, String> env) {
    if (!mayHaveDocker(env)) {
      return false;
    }
    try {
      return ContainerServices.dockerAvailable();
    } catch (RuntimeException e) {
      return false;
    }
  }

  /** A cheap look for signs of a Docker engine; on Windows (named pipes) always yes. */
  static boolean mayHaveDocker(Map<String, String> env) {
    if (System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("windows")) {
      return true;
    }
    if (isSet(env, "DOCKER_HOST") || isSet(env, "TESTCONTAINERS_DOCKER_SOCKET_OVERRIDE")) {
      return true;
    }
    List<Path> candidates = new ArrayList<>();
    candidates.add(Path.of("/var/run/docker.sock"));
    String home = env.getOrDefault("HOME", System.getProperty("user.home"));
    if (home != null && !home.isBlank()) {
      candidates.add(Path.of(home, ".testcontainers.properties"));
      candidates.add(Path.of(home, ".docker", "run", "docker.sock"));
      candidates.add(Path.of(home, ".docker", "desktop", "docker.sock"));
      candidates.add(Path.of(home, ".colima", "default", "docker.sock"));
      candidates.add(Path.of(home, ".rd", "docker.sock"));
    }
    String runtimeDir = env.get("XDG_RUNTIME_DIR");
    if (runtimeDir != null && !runtimeDir.isBlank()) {
      candidates.add(Path.of(runtimeDir, "docker.sock"));
      candidates.add(Path.of(runtimeDir, "podman", "podman.sock"));
    }
    return candidates.stream().anyMatch(Files::exists);
  }

  private static boolean isSet(Map<String, String> env, String name) {
    String value = env.get(name);
    return value != null && !value.isBlank();
  }
}
