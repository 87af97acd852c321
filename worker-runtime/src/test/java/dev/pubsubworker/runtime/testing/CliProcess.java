package dev.pubsubworker.runtime.testing;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The worker's command line as a separate JVM on the test class path, the way a deployment runs it:
 * for tests of signals, exit codes and what reaches stdout and stderr.
 */
public final class CliProcess {

  private CliProcess() {}

  /**
   * A process builder for {@code pubsub-worker args...}, with stdout and stderr together in {@code
   * log}. Add environment variables before starting it.
   */
  public static ProcessBuilder builder(Path log, String... args) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add("dev.pubsubworker.runtime.cli.WorkerCli");
    command.addAll(List.of(args));
    return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
  }

  /**
   * As {@link #builder}, but with the class path the executable jar gives {@code run}: without the
   * example plugin's service entry, so the example is loaded only from a plugins folder. (The
   * example's classes are left out altogether; the jar's loader takes them from the jar.)
   */
  public static ProcessBuilder builderWithoutExamplePlugin(Path log, String... args) {
    ProcessBuilder pb = builder(log, args);
    List<String> command = pb.command();
    int cp = command.indexOf("-cp") + 1;
    String example;
    try {
      example =
          Path.of(
                  dev.pubsubworker.plugins.orders.OrdersPlugin.class
                      .getProtectionDomain()
                      .getCodeSource()
                      .getLocation()
                      .toURI())
              .toString();
    } catch (java.net.URISyntaxException e) {
      throw new IllegalStateException(e);
    }
    List<String> entries = new ArrayList<>();
    for (String entry : command.get(cp).split(java.io.File.pathSeparator)) {
      if (!Path.of(entry).toAbsolutePath().toString().equals(example)) {
        entries.add(entry);
      }
    }
    command.set(cp, String.join(java.io.File.pathSeparator, entries));
    return pb;
  }
}
