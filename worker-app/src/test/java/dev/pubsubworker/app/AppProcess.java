package dev.pubsubworker.app;

import dev.pubsubworker.plugins.orders.OrdersPlugin;
import java.io.File;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The app's command line as a separate JVM on the test class path, the way a deployment runs it:
 * for tests of exit codes and what reaches stdout and stderr.
 */
final class AppProcess {

  private AppProcess() {}

  /**
   * A process builder for {@code pubsub-worker args...} on the test class path (the example plugin
   * on it, as a class-path plugin), with stdout and stderr together in {@code log}.
   */
  static ProcessBuilder builder(Path log, String... args) {
    return command(
        log, List.of(System.getProperty("java.class.path").split(File.pathSeparator)), args);
  }

  /**
   * A process builder for {@code pubsub-worker args...} with the class path the executable jar
   * gives {@code run}: without the example plugin's service entry, so the example is loaded only
   * from a plugins folder. (The example's classes are left out altogether; the jar's loader takes
   * them from the jar.) Stdout and stderr go together to {@code log}.
   */
  static ProcessBuilder builderWithoutExamplePlugin(Path log, String... args) {
    String example;
    try {
      example =
          Path.of(OrdersPlugin.class.getProtectionDomain().getCodeSource().getLocation().toURI())
              .toString();
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
    List<String> entries = new ArrayList<>();
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      if (!Path.of(entry).toAbsolutePath().toString().equals(example)) {
        entries.add(entry);
      }
    }
    return command(log, entries, args);
  }

  private static ProcessBuilder command(Path log, List<String> classPath, String... args) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-cp");
    command.add(String.join(File.pathSeparator, classPath));
    command.add(WorkerApp.class.getName());
    command.addAll(List.of(args));
    return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
  }
}
