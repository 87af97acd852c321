package dev.pubsubworker.runtime.cli;

import dev.pubsubworker.core.LockRecord;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.store.LockStore;
import java.io.PrintWriter;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code inspect KEY}: shows a key's record in the configured lock store. */
@Command(
    name = "inspect",
    mixinStandardHelpOptions = true,
    versionProvider = WorkerCli.Version.class,
    description = "Show a key's record (state, fence, lease expiry, expires-at) in the lock store.")
final class InspectCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin StoreOptions options;

  @Mixin KeyArgument target;

  @Option(names = "--json", description = "Print the record as one JSON object.")
  boolean json;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    if (target.key.isEmpty()) {
      return Failures.badArgument(spec.commandLine().getErr(), "KEY must not be empty");
    }
    WorkerConfig config;
    String key;
    try {
      config = options.config.load();
      key = target.storedKey(config, spec.commandLine());
    } catch (ParameterException e) {
      throw e;
    } catch (RuntimeException e) {
      return Failures.report(e, spec.commandLine().getErr(), options.verbose);
    }
    try (LockStore store = LockStore.of(config)) {
      Optional<LockRecord> record;
      try {
        record = store.admin().inspect(key);
      } catch (IllegalArgumentException e) {
        return Failures.badArgument(spec.commandLine().getErr(), "KEY: " + e.getMessage());
      }
      if (json) {
        out.println(record.map(RecordView::json).orElse(RecordView.absentJson(key)));
      } else {
        out.println(
            record
                .map(RecordView::human)
                .orElse("no record for this key: the next delivery runs (at fence 1)"));
      }
      out.flush();
      return ExitCodes.OK;
    } catch (RuntimeException e) {
      return Failures.report(e, spec.commandLine().getErr(), options.verbose, config.lockStore());
    }
  }
}
