package dev.pubsubworker.runtime.cli;

import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import dev.pubsubworker.runtime.config.ConfigProblem;
import dev.pubsubworker.runtime.config.InvalidConfigException;
import dev.pubsubworker.runtime.config.WorkerConfig;
import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * The {@code --config FILE} option shared by the commands that read the worker's settings. Without
 * it, the standard Typesafe Config lookup applies ({@code -Dconfig.file}, {@code application.conf}
 * on the class path).
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
    if (file != null) {
      return WorkerConfig.loadFile(file, loader);
    }
    try {
      ConfigFactory.invalidateCaches();
      return WorkerConfig.load(ConfigFactory.load(loader));
    } catch (ConfigException e) {
      throw new InvalidConfigException(
          List.of(
              new ConfigProblem(
                  "config", e.getMessage(), e.origin() == null ? "" : e.origin().description())));
    }
  }
}
