package dev.pubsubworker.runtime.cli;

import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
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
    return target.withRecord(
        options,
        spec.commandLine(),
        (store, key, record) -> {
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
        });
  }
}
