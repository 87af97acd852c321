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
}
