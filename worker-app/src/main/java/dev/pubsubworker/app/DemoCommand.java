package dev.pubsubworker.app;

import dev.pubsubworker.app.demo.Demo;
import dev.pubsubworker.app.demo.DemoBackend;
import dev.pubsubworker.app.demo.DemoOptions;
import dev.pubsubworker.app.demo.DemoPubSub;
import dev.pubsubworker.runtime.cli.ExitCodes;
import dev.pubsubworker.runtime.cli.Failures;
import dev.pubsubworker.runtime.cli.WorkerCli;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code demo}: see exactly-once work with one command. Starts the embedded Pub/Sub server in this
 * process (nothing to install; {@code --pubsub emulator} starts Google's emulator instead, {@code
 * --pubsub HOST:PORT} uses one that runs) and, for {@code --backend datastore}, Google's Datastore
 * emulator; runs the real worker with the example orders plugin, and publishes orders with
 * duplicate publishes, failing placements and crashed holders. Exits 0 only if every order was
 * placed exactly once.
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    versionProvider = WorkerCli.Version.class,
    description = "Run everything locally against a hostile load and check exactly-once.")
final class DemoCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(
      names = "--messages",
      defaultValue = "200",
      description = "Orders to publish (default: ${DEFAULT-VALUE}).")
  int messages;

  @Option(
      names = "--duplicates",
      defaultValue = "0.2",
      description = "Share of orders published twice, new message id (default: ${DEFAULT-VALUE}).")
  double duplicates;

  @Option(
      names = "--failures",
      defaultValue = "0.1",
      description = "Share of orders whose first placement fails (default: ${DEFAULT-VALUE}).")
  double failures;

  @Option(
      names = "--crashes",
      defaultValue = "0.05",
      description =
          "Share of orders a crashed worker claimed and abandoned (default: ${DEFAULT-VALUE}).")
  double crashes;

  @Option(
      names = "--backend",
      defaultValue = "h2",
      description = "in-memory | h2 | redis | postgres | datastore (default: ${DEFAULT-VALUE}).",
      converter = BackendConverter.class)
  DemoBackend backend;

  @Option(
      names = "--store-url",
      description = "Redis URI or JDBC URL of the store, instead of the local default.")
  String storeUrl;

  @Option(
      names = "--timeout",
      defaultValue = "PT3M",
      description = "How long to wait for every order (ISO-8601, default: ${DEFAULT-VALUE}).")
  Duration timeout;

  @Option(
      names = "--pubsub",
      defaultValue = "embedded",
      description =
          "embedded (a server in this process, nothing to install) | emulator (start Google's"
              + " from the Google Cloud CLI) | HOST:PORT (a Pub/Sub emulator or embedded server"
              + " that runs there) (default: ${DEFAULT-VALUE}).",
      converter = PubSubConverter.class)
  DemoPubSub pubsub;

  @Option(
      names = "--datastore-emulator-host",
      description = "Use this running Datastore emulator (host:port) instead of starting one.")
  String datastoreEmulatorHost;

  @Option(names = "--verbose", description = "Show the worker's log and stack traces.")
  boolean verbose;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    DemoOptions options;
    try {
      options =
          new DemoOptions(
              messages,
              duplicates,
              failures,
              crashes,
              backend,
              Optional.ofNullable(storeUrl),
              timeout,
              pubsub,
              Optional.ofNullable(datastoreEmulatorHost),
              System.console() != null);
    } catch (IllegalArgumentException e) {
      spec.commandLine().getErr().println("error: " + e.getMessage());
      return ExitCodes.BAD_CONFIG;
    }
    Runnable restoreLogs = verbose ? () -> {} : Demo.quietLogs();
    try {
      return switch (new Demo(options, out).run()) {
        case EXACTLY_ONCE -> ExitCodes.OK;
        case VIOLATED -> ExitCodes.NOT_EXACTLY_ONCE;
        case UNAVAILABLE -> ExitCodes.UNAVAILABLE;
      };
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Failures.report(e, spec.commandLine().getErr(), verbose);
    } catch (Exception e) {
      return Failures.report(e, spec.commandLine().getErr(), verbose);
    } finally {
      restoreLogs.run();
    }
  }

  /** Parses {@code in-memory}, {@code h2}, ... case-insensitively. */
  static final class BackendConverter implements picocli.CommandLine.ITypeConverter<DemoBackend> {
    @Override
    public DemoBackend convert(String value) {
      for (DemoBackend b : DemoBackend.values()) {
        if (b.name().replace('_', '-').equalsIgnoreCase(value)) {
          return b;
        }
      }
      throw new picocli.CommandLine.TypeConversionException(
          "must be in-memory, h2, redis, postgres or datastore, but was '" + value + "'");
    }
  }

  /** Parses {@code embedded}, {@code emulator} or {@code HOST:PORT}. */
  static final class PubSubConverter implements picocli.CommandLine.ITypeConverter<DemoPubSub> {
    @Override
    public DemoPubSub convert(String value) {
      try {
        return DemoPubSub.parse(value);
      } catch (IllegalArgumentException e) {
        throw new picocli.CommandLine.TypeConversionException(e.getMessage());
      }
    }
  }
}
