package dev.pubsubworker.app;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pubsubworker.api.WorkerPlugin;
import dev.pubsubworker.plugins.orders.OrdersPlugin;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The executable jar {@code package} built, {@code target/pubsub-worker.jar}: its main class is the
 * app's, it offers the runtime's commands and {@code demo}, and it carries the example plugin's
 * classes (for {@code demo}) but not its {@link java.util.ServiceLoader} entry, so that {@code run}
 * and {@code check-config} load the example only from a plugins folder.
 */
class ExecutableJarIT {

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final Path JAR = ROOT.resolve("worker-app/target/pubsub-worker.jar");
  private static final String SERVICES = "META-INF/services/" + WorkerPlugin.class.getName();

  @TempDir Path dir;

  @Test
  void the_jar_starts_the_app_and_holds_the_example_without_its_service_entry() throws IOException {
    try (JarFile jar = new JarFile(JAR.toFile())) {
      assertThat(jar.getManifest().getMainAttributes().getValue("Main-Class"))
          .isEqualTo(WorkerApp.class.getName());
      assertThat(jar.getJarEntry(OrdersPlugin.class.getName().replace('.', '/') + ".class"))
          .as("the example's classes, for demo")
          .isNotNull();
      JarEntry services = jar.getJarEntry(SERVICES);
      if (services != null) {
        String listed =
            new String(jar.getInputStream(services).readAllBytes(), StandardCharsets.UTF_8);
        assertThat(listed).doesNotContain(OrdersPlugin.class.getName());
      }
    }
  }

  @Test
  void the_jar_offers_the_runtime_commands_and_demo() throws Exception {
    String help = run(List.of("--help"), null);
    assertThat(help)
        .contains("run", "check-config", "inspect", "forget", "purge", "publish", "demo");
    assertThat(run(List.of("demo", "--help"), null)).contains("--backend", "--pubsub");
  }

  @Test
  void check_config_finds_no_example_plugin_without_a_plugins_folder() throws Exception {
    Path empty = Files.createDirectories(dir.resolve("no-plugins"));
    String output =
        run(
            List.of("check-config", "--config", ROOT.resolve("config/local.conf").toString()),
            empty);
    assertThat(output)
        .contains("no plugin binds a handler named 'orders'; handlers found: none")
        .doesNotContain("class path");
  }

  /** Runs the jar to its end; returns stdout and stderr together. */
  private String run(List<String> args, Path pluginsDir) throws Exception {
    Path log = dir.resolve("jar-" + System.nanoTime() + ".log");
    List<String> command =
        new java.util.ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar",
                JAR.toString()));
    command.addAll(args);
    ProcessBuilder pb =
        new ProcessBuilder(command)
            .directory(ROOT.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    pb.environment().keySet().removeIf(k -> k.startsWith("PUBSUB_WORKER_"));
    pb.environment().put("GOOGLE_CLOUD_PROJECT", "sample-project");
    if (pluginsDir != null) {
      pb.environment().put("PUBSUB_WORKER_PLUGINS_DIR", pluginsDir.toString());
    }
    Process p = pb.start();
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError(
          "java -jar " + args + " did not end in 60 s:\n" + Files.readString(log));
    }
    return Files.readString(log);
  }
}
