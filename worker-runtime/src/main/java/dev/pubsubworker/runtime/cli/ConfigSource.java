package dev.pubsubworker.runtime.cli;

import dev.pubsubworker.runtime.config.InvalidConfigException;
import dev.pubsubworker.runtime.config.WorkerConfig;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * The {@code --config FILE} option shared by the commands that read the worker's settings. Without
 * it, the standard Typesafe Config lookup applies ({@code -Dconfig.file}, {@code application.conf}
 * on the class path), with the same checks ({@link WorkerConfig#loadDefault}).
 */
final class ConfigSource {

  @Option(
      names = {"-c", "--config"},
      paramLabel = "FILE",
      description =
          "HOCON config file (default: -Dconfig.file or application.conf on the class path)")
  Path file;

  /**
   * Loads and checks the settings.
   *
   * @throws InvalidConfigException listing every problem
   */
  WorkerConfig load() {
    ClassLoader loader = ConfigSource.class.getClassLoader();
    return file != null ? WorkerConfig.loadFile(file, loader) : WorkerConfig.loadDefault(loader);
  }
}
