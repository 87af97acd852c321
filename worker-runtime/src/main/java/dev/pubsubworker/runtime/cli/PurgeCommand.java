package dev.pubsubworker.runtime.cli;

import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.store.LockStore;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code purge}: removes expired records (past their suppression window) in batches and prints the
 * count. Records still within their window are never touched.
 */
@Command(
    name = "purge",
    mixinStandardHelpOptions = true,
    versionProvider = WorkerCli.Version.class,
    description = "Remove expired records from the lock store, in batches, and print the count.")
final class PurgeCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin StoreOptions options;

  @Option(
      names = "--batch-size",
      defaultValue = "500",
      description = "Records removed per store call (default: ${DEFAULT-VALUE}).")
  int batchSize;

  @Option(
      names = "--max",
      defaultValue = "1000000",
      description = "Stop after this many records (default: ${DEFAULT-VALUE}).")
  long max;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    if (batchSize < 1 || max < 1) {
      spec.commandLine().getErr().println("error: --batch-size and --max must be at least 1");
      return ExitCodes.BAD_CONFIG;
    }
    WorkerConfig settings;
    try {
      settings = options.config.load();
    } catch (RuntimeException e) {
      return Failures.report(e, spec.commandLine().getErr(), options.verbose);
    }
    try (LockStore store = LockStore.of(settings)) {
      long total = 0;
      int removed;
      do {
        int batch = (int) Math.min(batchSize, max - total);
        removed = store.admin().purgeExpired(batch);
        total += removed;
        if (removed > 0) {
          out.println("removed " + removed + " (" + total + " in all)");
          out.flush();
        }
        if (removed < batch) {
          break;
        }
      } while (total < max);
      out.println("purged " + total + " expired record(s)");
      out.flush();
      return ExitCodes.OK;
    } catch (RuntimeException e) {
      return Failures.report(e, spec.commandLine().getErr(), options.verbose, settings.lockStore());
    }
  }
}
