package dev.pubsubworker.runtime.cli;

import com.google.common.util.concurrent.Service;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.observability.LogFormats;
import dev.pubsubworker.runtime.observability.Observability;
import dev.pubsubworker.runtime.plugin.LoadedPlugin;
import dev.pubsubworker.runtime.plugin.PluginLoader;
import dev.pubsubworker.runtime.worker.Worker;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code run}: the worker. Pulls every configured subscription until SIGTERM, SIGINT or SIGHUP,
 * then stops gracefully (a second signal exits at once). A signal during start-up ends the start:
 * no subscriber pulls, what was opened is closed. Exits 0 after a graceful stop (also one during
 * start-up), non-zero if the config is invalid, a subscription or the lock store is unavailable, or
 * a subscriber failed.
 *
 * <p>Applies {@code pubsub-worker.logging.format} and {@code source-location} to the log output,
 * and serves {@code /metrics}, {@code /healthz} and {@code /readyz} on {@code
 * pubsub-worker.observability.http-host:http-port} (port 0: off) from before the subscribers start
 * until the worker has stopped.
 */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    versionProvider = WorkerCli.Version.class,
    description = "Run the worker: pull every configured subscription until stopped.")
final class RunCommand implements Callable<Integer> {

  private static final Logger log = LoggerFactory.getLogger(RunCommand.class);

  @Spec CommandSpec spec;

  @Mixin ConfigSource config;

  @Option(names = "--verbose", description = "Print stack traces of errors.")
  boolean verbose;

  @Override
  public Integer call() {
    // From the first instant: a signal during start-up ends the start cleanly instead of the
    // JVM's default (exit 143 for SIGTERM, 129 for SIGHUP, with nothing closed).
    StopRequest stop = new StopRequest();
    AutoCloseable signals = Signals.install(stop::request, ExitCodes.HALTED);
    try {
      return run(stop);
    } finally {
      try {
        signals.close();
      } catch (Exception e) {
        // Nothing to do: the handlers stay, and the process is about to exit.
      }
    }
  }

  private int run(StopRequest stop) {
    Worker worker;
    Observability observability = null;
    WorkerConfig settings = null;
    try {
      settings = config.load();
      LogFormats.apply(settings.logging());
      List<LoadedPlugin> plugins = PluginLoader.load(settings, RunCommand.class.getClassLoader());
      observability = Observability.create(settings);
      worker =
          Worker.newBuilder(settings)
              .plugins(plugins)
              .guardListeners(observability::guardListeners)
              .dispatchListeners(observability.dispatchListeners())
              .build();
      if (!stop.attach(worker)) {
        observability.close();
        return stoppedDuringStartUp();
      }
      // Serving before the subscribers start lets probes see "alive, not ready" during start-up.
      observability.start(worker);
      worker.start();
    } catch (RuntimeException e) {
      if (observability != null) {
        observability.close();
      }
      if (stop.requested()) {
        log.debug("the start ended with an error after the stop was asked for", e);
        return stoppedDuringStartUp();
      }
      return Failures.report(
          e, spec.commandLine().getErr(), verbose, settings == null ? null : settings.lockStore());
    }
    worker.awaitStopped();
    observability.close();
    if (stop.requested()
        && worker.service().state() == Service.State.FAILED
        && worker.service().failureCause() instanceof CancellationException) {
      return stoppedDuringStartUp(); // the signal came while the worker was starting
    }
    if (worker.failure().isPresent()) {
      return Failures.report(
          worker.failure().get(), spec.commandLine().getErr(), verbose, settings.lockStore());
    }
    return ExitCodes.OK;
  }

  private static int stoppedDuringStartUp() {
    log.info("stopped during start-up by a signal: nothing was pulled; exiting 0");
    return ExitCodes.OK;
  }

  /**
   * The first signal's graceful stop, whenever it comes: before the worker exists it only marks the
   * stop (the start then ends before the worker is built or started); after, it stops the worker,
   * which ends a start in progress ({@link Worker#stop()}).
   */
  private static final class StopRequest {
    private Worker worker;
    private boolean requested;

    /** Hands over the worker; false if the stop was already asked for (do not start it). */
    synchronized boolean attach(Worker w) {
      worker = w;
      return !requested;
    }

    synchronized boolean requested() {
      return requested;
    }

    void request() {
      Worker w;
      synchronized (this) {
        requested = true;
        w = worker;
      }
      if (w != null) {
        w.stop();
      }
    }
  }
}
