package dev.pubsubworker.runtime.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code inspect KEY}: shows a key's record in the configured lock store; a record the store's
 * backend cannot read is shown as stored, field by field, with what is wrong with it (exit 0).
 */
@Command(
    name = "inspect",
    mixinStandardHelpOptions = true,
    versionProvider = WorkerCli.Version.class,
    description =
        "Show a key's record (state, fence, lease expiry, expires-at) in the lock store; a record"
            + " the worker cannot read is shown as stored.")
final class InspectCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin StoreOptions options;

  @Mixin KeyArgument target;

  @Option(names = "--json", description = "Print the record as one JSON object.")
  boolean json;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    return target.withRecord(
        options,
        spec.commandLine(),
        (store, key, found) -> {
          out.println(json ? RecordView.json(key, found) : RecordView.human(found));
          out.flush();
          return ExitCodes.OK;
        });
  }
}
