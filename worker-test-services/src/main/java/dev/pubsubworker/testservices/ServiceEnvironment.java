package dev.pubsubworker.testservices;

import dev.pubsubworker.emulators.CloudSdk;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * Everything service resolution reads from the outside world, gathered in one place so that tests
 * can inject it: environment variables, where the local servers listen, whether a Docker engine
 * answers, what starts containers, where logs go and where the resolution report is printed.
 *
 * <p>Environment variables read here (besides each {@link ServiceKind#environmentVariable()}):
 *
 * <ul>
 *   <li>{@code CI} — {@code true} turns every "unavailable" abort into a failure;
 *   <li>{@code TEST_SERVICES_CLOUD_SDK} — the Google Cloud CLI root to use; when set, it is the
 *       only place emulators are looked for (set it to a missing folder to hide the emulators);
 *   <li>{@code TEST_SERVICES_SOURCES} — a comma-separated subset of {@code env}, {@code local},
 *       {@code testcontainers}, {@code embedded}: the sources to try (default: all);
 *   <li>{@code TEST_SERVICES_WORK_DIR} — where emulator logs go (default {@code
 *       target/test-services} under the working directory);
 *   <li>{@code PATH} and {@code HOME} — to find {@code gcloud} and a Cloud CLI under the home
 *       folder.
 * </ul>
 *
 * <p>Immutable and thread-safe; the Docker check runs at most once.
 */
final class ServiceEnvironment {

  static final String CLOUD_SDK_VARIABLE = "TEST_SERVICES_CLOUD_SDK";
  static final String SOURCES_VARIABLE = "TEST_SERVICES_SOURCES";
  static final String WORK_DIR_VARIABLE = "TEST_SERVICES_WORK_DIR";

  /** Where this machine's own servers listen when no environment variable says otherwise. */
  record LocalPorts(String host, int redis, int postgres, int mariadb) {
    static final LocalPorts DEFAULT = new LocalPorts("127.0.0.1", 6379, 5432, 3306);
  }

  private final Map<String, String> variables;
  private final LocalPorts localPorts;
  private final BooleanSupplier dockerProbe;
  private final ContainerStarter containers;
  private final Consumer<String> reporter;
  private volatile Boolean dockerAnswers;

  ServiceEnvironment(
      Map<String, String> variables,
      LocalPorts localPorts,
      BooleanSupplier dockerProbe,
      ContainerStarter containers,
      Consumer<String> reporter) {
    this.variables = Map.copyOf(variables);
    this.localPorts = localPorts;
    this.dockerProbe = dockerProbe;
    this.containers = containers;
    this.reporter = reporter;
  }

  /** The real environment of this JVM; reports go to stderr and to {@code resolution.log}. */
  static ServiceEnvironment system() {
    Map<String, String> env = System.getenv();
    Path workDir = workDir(env);
    return new ServiceEnvironment(
        env,
        LocalPorts.DEFAULT,
        () -> DockerProbe.dockerAnswers(env),
        ContainerServices.DOCKER,
        new ResolutionReport(workDir.resolve("resolution.log")));
  }

  /** A variable's value, empty when unset or blank. */
  Optional<String> variable(String name) {
    String value = variables.get(name);
    return value == null || value.isBlank() ? Optional.empty() : Optional.of(value.trim());
  }

  /**
   * Whether this is a CI run ({@code CI=true}): an unavailable service fails instead of skipping.
   */
  boolean ci() {
    return variable("CI").map(v -> v.equalsIgnoreCase("true")).orElse(false);
  }

  LocalPorts localPorts() {
    return localPorts;
  }

  /** Whether a Docker engine answers (checked once, lazily). */
  boolean dockerAnswers() {
    Boolean answer = dockerAnswers;
    if (answer == null) {
      synchronized (this) {
        answer = dockerAnswers;
        if (answer == null) {
          answer = dockerProbe.getAsBoolean();
          dockerAnswers = answer;
        }
      }
    }
    return answer;
  }

  /** What the Testcontainers source starts; only asked once {@link #dockerAnswers()} is true. */
  ContainerStarter containers() {
    return containers;
  }

  /** Prints one line of the resolution report. */
  void report(String line) {
    reporter.accept(line);
  }

  /** Where process logs go; created on demand by whoever writes there. */
  Path workDir() {
    return workDir(variables);
  }

  private static Path workDir(Map<String, String> env) {
    String configured = env.get(WORK_DIR_VARIABLE);
    if (configured != null && !configured.isBlank()) {
      return Path.of(configured.trim()).toAbsolutePath();
    }
    return Path.of(System.getProperty("user.dir"), "target", "test-services").toAbsolutePath();
  }

  /**
   * The sources to try, from {@code TEST_SERVICES_SOURCES} (all when unset).
   *
   * @throws IllegalStateException when the variable names an unknown source
   */
  Set<ServiceSource> enabledSources() {
    Optional<String> configured = variable(SOURCES_VARIABLE);
    if (configured.isEmpty()) {
      return EnumSet.allOf(ServiceSource.class);
    }
    EnumSet<ServiceSource> sources = EnumSet.noneOf(ServiceSource.class);
    for (String token : configured.get().split(",")) {
      String name = token.trim().toLowerCase(Locale.ROOT);
      switch (name) {
        case "env", "env-var", "env_var" -> sources.add(ServiceSource.ENV_VAR);
        case "local" -> sources.add(ServiceSource.LOCAL);
        case "testcontainers", "docker" -> sources.add(ServiceSource.TESTCONTAINERS);
        case "embedded" -> sources.add(ServiceSource.EMBEDDED);
        case "" -> {
          // tolerate "local,,embedded" and a trailing comma
        }
        default ->
            throw new IllegalStateException(
                SOURCES_VARIABLE
                    + " names an unknown source '"
                    + token.trim()
                    + "'; known: env, local, testcontainers, embedded");
      }
    }
    return sources;
  }

  /**
   * The folders that may hold the Google Cloud CLI, most specific first: {@code
   * TEST_SERVICES_CLOUD_SDK} alone when set; otherwise the installation that {@code gcloud} on
   * {@code PATH} belongs to, the usual package locations and {@code ~/google-cloud-sdk} ({@link
   * CloudSdk#roots(String, java.util.function.Function)}).
   */
  List<Path> cloudSdkRoots() {
    return CloudSdk.roots(CLOUD_SDK_VARIABLE, this::variable);
  }

  /** The SDK root for messages: what was looked at, comma-separated. */
  String describeCloudSdkRoots() {
    List<String> names = new ArrayList<>();
    for (Path root : cloudSdkRoots()) {
      names.add(root.toString());
    }
    return String.join(", ", names);
  }
}
