package dev.pubsubworker.runtime.testing;

import dev.pubsubworker.api.WorkerPlugin;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
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
    return builder(log, List.of(), args);
  }

  /**
   * Like {@link #builder(Path, String...)}, with {@code extraClassPath} ahead of the test class
   * path (see {@link #withPlugin}).
   */
  public static ProcessBuilder builder(Path log, List<Path> extraClassPath, String... args) {
    List<String> classPath = new ArrayList<>();
    extraClassPath.forEach(p -> classPath.add(p.toString()));
    classPath.add(System.getProperty("java.class.path"));
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-cp");
    command.add(String.join(File.pathSeparator, classPath));
    command.add("dev.pubsubworker.runtime.cli.WorkerCli");
    command.addAll(List.of(args));
    return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
  }

  /**
   * A class-path folder under {@code dir} that lists the test class {@code plugin} for {@link
   * java.util.ServiceLoader} and holds {@code referenceConf} as its {@code reference.conf} (the
   * plugin's defaults, as a plugin jar ships them), so that a worker process started with the
   * folder in {@link #builder(Path, List, String...)}'s extra class path loads that plugin, and
   * only the processes that ask for it do.
   */
  public static Path withPlugin(
      Path dir, Class<? extends WorkerPlugin> plugin, String referenceConf) throws IOException {
    Path folder = dir.resolve("plugin-" + plugin.getSimpleName());
    Path services = folder.resolve("META-INF/services/" + WorkerPlugin.class.getName());
    Files.createDirectories(services.getParent());
    Files.writeString(services, plugin.getName() + "\n");
    Files.writeString(folder.resolve("reference.conf"), referenceConf);
    return folder;
  }
}
