package dev.pubsubworker.runtime.cli;

import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.observability.LogFormats;
import dev.pubsubworker.runtime.observability.Observability;
import dev.pubsubworker.runtime.plugin.LoadedPlugin;
import dev.pubsubworker.runtime.plugin.PluginLoader;
import dev.pubsubworker.runtime.worker.Worker;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code run}: the worker. Pulls every configured subscription until SIGTERM/SIGINT, then stops
 * gracefully (a second signal exits at once). Exits 0 after a graceful stop, non-zero if the config
 * is invalid, a subscription or the lock store is unavailable, or a subscriber failed.
 *
 * <p>Applies {@code pubsub-worker.logging.format} to the log output, and serves {@code /metrics},
 * {@code /healthz} and {@code /readyz} on {@code pubsub-worker.observability.http-host:http-port}
 * (port 0: off) from before the subscribers start until the worker has stopped.
 */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    versionProvider = WorkerCli.Version.class,
    description = "Run the worker: pull every configured subscription until stopped.")
final class RunCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin ConfigSource config;

  @Option(names = "--verbose", description = "Print stack traces of errors.")
  boolean verbose;

  @Override
  public Integer call() {
    Worker worker;
    Observability observability = null;
    WorkerConfig settings = null;
    try {
      settings = config.load();
      LogFormats.apply(settings.logging().format());
      List<LoadedPlugin> plugins = PluginLoader.load(settings, RunCommand.class.getClassLoader());
      observability = Observability.create(settings);
      worker =
          Worker.create(
              settings,
              plugins,
              observability::guardListeners,
              observability.dispatchListeners(),
              settings.logging().keyFormat().renderer());
      // Serving before the subscribers start lets probes see "alive, not ready" during start-up.
      observability.start(worker);
      worker.start();
    } catch (RuntimeException e) {
      if (observability != null) {
        observability.close();
      }
      return Failures.report(
          e, spec.commandLine().getErr(), verbose, settings == null ? null : settings.lockStore());
    }
    Signals.install(worker::stop, ExitCodes.HALTED);
    worker.awaitStopped();
    observability.close();
    if (worker.failure().isPresent()) {
      return Failures.report(
          worker.failure().get(), spec.commandLine().getErr(), verbose, settings.lockStore());
    }
    return ExitCodes.OK;
  }
}
