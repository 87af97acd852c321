package dev.pubsubworker.runtime.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code forget KEY}: deletes a key's record for a deliberate replay, so its next delivery runs
 * again. Asks for confirmation unless {@code --yes}. Deletes a record the store's backend cannot
 * read as well (the way to unblock its key).
 */
@Command(
    name = "forget",
    mixinStandardHelpOptions = true,
    versionProvider = WorkerCli.Version.class,
    description =
        "Delete a key's record for a deliberate replay: the next delivery for the key runs again.")
final class ForgetCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @ParentCommand WorkerCli parent;

  @Mixin StoreOptions options;

  @Mixin KeyArgument target;

  @Option(
      names = {"-y", "--yes"},
      description = "Do not ask for confirmation.")
  boolean yes;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    return target.withRecord(
        options,
        spec.commandLine(),
        (store, key, found) -> {
          if (found.absent()) {
            out.println("no record for this key: nothing to forget");
            out.flush();
            return ExitCodes.OK;
          }
          out.println(RecordView.human(found));
          if (!yes && !confirm(out, parent.input())) {
            out.println("not forgotten");
            out.flush();
            return ExitCodes.FAILURE;
          }
          boolean deleted = store.admin().forget(key);
          out.println(
              deleted ? "forgotten: the next delivery for this key runs again" : "already gone");
          out.flush();
          return ExitCodes.OK;
        });
  }

  private static boolean confirm(PrintWriter out, BufferedReader in) {
    out.print("Forget this key? Its next delivery will run again (a deliberate replay). [y/N] ");
    out.flush();
    try {
      String answer = in.readLine();
      return answer != null && answer.trim().toLowerCase(Locale.ROOT).matches("y|yes");
    } catch (IOException e) {
      return false;
    }
  }
}
