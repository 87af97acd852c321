package dev.pubsubworker.runtime.cli;

import dev.pubsubworker.core.DurationText;
import dev.pubsubworker.runtime.config.KnownSecrets;
import dev.pubsubworker.runtime.config.SubscriptionConfig;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.plugin.LoadedPlugin;
import dev.pubsubworker.runtime.plugin.PluginLoader;
import dev.pubsubworker.runtime.pubsub.CrashRecovery;
import dev.pubsubworker.runtime.worker.Worker;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code check-config}: validates a config without connecting to anything — settings, plugins,
 * handler names — and prints what it resolved to (with each subscription's worst-case wait after a
 * crash, {@link CrashRecovery}), or every problem with its path and origin.
 */
@Command(
    name = "check-config",
    mixinStandardHelpOptions = true,
    versionProvider = WorkerCli.Version.class,
    description =
        "Validate a config file and print the resolved subscriptions, lock store and plugins.")
final class CheckConfigCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin ConfigSource config;

  @Option(names = "--verbose", description = "Print stack traces of errors.")
  boolean verbose;

  @Override
  public Integer call() {
    WorkerConfig settings;
    List<LoadedPlugin> plugins;
    try {
      settings = config.load();
      plugins = PluginLoader.load(settings, CheckConfigCommand.class.getClassLoader());
      Worker.newBuilder(settings).plugins(plugins).build();
    } catch (RuntimeException e) {
      return Failures.report(e, spec.commandLine().getErr(), verbose);
    }
    // The echo is printed masked (KnownSecrets): a URL or plugin setting can hold a secret.
    StringWriter echo = new StringWriter();
    PrintWriter out = new PrintWriter(echo);
    out.println("config OK");
    out.println("project:      " + settings.projectId());
    out.println(
        "pubsub:       "
            + settings
                .pubsubEmulatorHost()
                .map(h -> "emulator at " + h)
                .orElse("Google Cloud (ADC)"));
    out.println("lock store:   " + describeStore(settings));
    out.println("shutdown:     grace " + DurationText.of(settings.shutdownGrace()));
    out.println("plugins:      " + (plugins.isEmpty() ? "none" : ""));
    for (LoadedPlugin p : plugins) {
      out.println(
          "  " + p.name() + " (" + p.plugin().getClass().getName() + ", " + p.source() + ")");
    }
    out.println("subscriptions:");
    for (SubscriptionConfig s : settings.orderedSubscriptions()) {
      out.printf(
          "  %s: %s -> handler %s, guard %s, key %s, lease %s, ttl %s, exactly-once %s%n",
          s.id(),
          s.name(),
          s.handler(),
          s.guard().mode().name().toLowerCase(java.util.Locale.ROOT),
          s.guard().key().text(),
          DurationText.of(s.guard().lease()),
          DurationText.of(s.guard().ttl()),
          s.client().exactlyOnce().name().toLowerCase(java.util.Locale.ROOT));
      out.println("    after a crash: messages run again " + CrashRecovery.of(s).describe());
    }
    out.flush();
    spec.commandLine().getOut().print(KnownSecrets.mask(echo.toString()));
    spec.commandLine().getOut().flush();
    return ExitCodes.OK;
  }

  private static String describeStore(WorkerConfig settings) {
    return switch (settings.lockStore().type()) {
      case IN_MEMORY -> "in-memory (process-local: tests and demos only)";
      case REDIS -> "redis " + settings.lockStore().redis();
      case SQL -> "sql " + settings.lockStore().sql();
      case DATASTORE -> "datastore " + settings.lockStore().datastore();
    };
  }
}
