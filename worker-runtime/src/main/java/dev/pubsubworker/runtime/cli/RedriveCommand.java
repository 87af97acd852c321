package dev.pubsubworker.runtime.cli;

import dev.pubsubworker.runtime.config.SubscriptionConfig;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.observability.LogFormats;
import dev.pubsubworker.runtime.plugin.LoadedPlugin;
import dev.pubsubworker.runtime.plugin.PluginLoader;
import dev.pubsubworker.runtime.pubsub.DeadLetterRedrive;
import dev.pubsubworker.runtime.pubsub.RedriveRequest;
import dev.pubsubworker.runtime.pubsub.RedriveSummary;
import dev.pubsubworker.runtime.worker.Worker;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code redrive --subscription ID}: reads dead letters from a dead-letter subscription and
 * processes each as subscription {@code ID} would (its handler, guard, key and key namespace); see
 * {@link dev.pubsubworker.runtime.pubsub.DeadLetterRedrive}. Prints one line per letter in a dry
 * run, then the summary line. Exits 0 when every letter acted on succeeded or was a duplicate,
 * {@link ExitCodes#FAILED_AGAIN} when some failed again (they stay on the dead-letter
 * subscription), {@link ExitCodes#FAILURE} when {@code --forget} was not confirmed (nothing read),
 * and as every command on a bad config or argument (2) or an unavailable subscription or lock store
 * (3). {@code --republish} publishes the letters back to a topic instead of processing them.
 */
@Command(
    name = "redrive",
    mixinStandardHelpOptions = true,
    versionProvider = WorkerCli.Version.class,
    description =
        "Process dead letters again as a configured subscription would: a key already DONE is"
            + " acked as a duplicate, a success is acked, a failure stays on the dead-letter"
            + " subscription.")
final class RedriveCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Mixin StoreOptions options;

  @Option(
      names = "--subscription",
      required = true,
      paramLabel = "ID",
      description = "The configured subscription to act as (its id under subscriptions).")
  String subscription;

  @Option(
      names = "--from",
      paramLabel = "DL_SUBSCRIPTION",
      description =
          "The dead-letter subscription to read: an id in project-id or"
              + " projects/P/subscriptions/S (default: the subscription's"
              + " dead-letter-subscription).")
  String from;

  @Option(
      names = "--max",
      defaultValue = "" + RedriveRequest.DEFAULT_MAX,
      description = "Read at most this many dead letters (default: ${DEFAULT-VALUE}).")
  int max;

  @Option(
      names = "--dry-run",
      description =
          "Report what would run and what is a duplicate; claim nothing, run nothing, ack nothing.")
  boolean dryRun;

  @Option(
      names = "--filter",
      paramLabel = "NAME=VALUE",
      description =
          "Redrive only dead letters whose attribute NAME is VALUE (repeatable: all must match);"
              + " the others stay.")
  List<String> filters = List.of();

  @Option(
      names = "--any-source",
      description =
          "Also redrive letters that another subscription dead-lettered (by default they stay).")
  boolean anySource;

  @Option(
      names = "--forget",
      description =
          "Forget the DONE record of each letter's key first, so its effect runs again (a"
              + " deliberate re-run; asks first unless --yes).")
  boolean forget;

  @Option(
      names = {"-y", "--yes"},
      description = "With --forget: do not ask for confirmation.")
  boolean yes;

  @Option(
      names = "--republish",
      description =
          "Publish each letter's original message back to the subscription's topic (or --topic)"
              + " instead of processing it; every subscription of the topic receives it again.")
  boolean republish;

  @Option(
      names = "--topic",
      paramLabel = "TOPIC",
      description =
          "The topic to republish to (implies --republish): an id in project-id or"
              + " projects/P/topics/T (default: the subscription's topic).")
  String topic;

  @ParentCommand WorkerCli parent;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    Map<String, String> filter = new LinkedHashMap<>();
    for (String f : filters) {
      int eq = f.indexOf('=');
      if (eq <= 0) {
        return Failures.badArgument(err, "--filter must be NAME=VALUE, but was '" + f + "'");
      }
      filter.put(f.substring(0, eq), f.substring(eq + 1));
    }
    RedriveRequest request;
    try {
      request =
          new RedriveRequest(
              subscription,
              Optional.ofNullable(from),
              max,
              dryRun,
              filter,
              anySource,
              forget,
              republish || topic != null,
              Optional.ofNullable(topic));
    } catch (IllegalArgumentException e) {
      return Failures.badArgument(err, e.getMessage());
    }
    WorkerConfig settings = null;
    Worker worker = null;
    try {
      settings = options.config.load();
      LogFormats.apply(settings.logging());
      List<LoadedPlugin> plugins =
          PluginLoader.load(settings, RedriveCommand.class.getClassLoader());
      worker = Worker.newBuilder(settings).plugins(plugins).build();
      if (forget && !dryRun && !yes && !confirm(out, settings, request)) {
        out.println("not redriven");
        out.flush();
        return ExitCodes.FAILURE;
      }
      RedriveSummary summary =
          worker.redrive(
              request,
              Optional.empty(),
              line -> {
                out.println(line);
                out.flush();
              });
      out.println(summary.line());
      out.flush();
      return summary.allDone() ? ExitCodes.OK : ExitCodes.FAILED_AGAIN;
    } catch (IllegalArgumentException e) {
      return Failures.badArgument(err, e.getMessage());
    } catch (RuntimeException e) {
      return Failures.report(
          e, err, options.verbose, settings == null ? null : settings.lockStore());
    } finally {
      if (worker != null) {
        worker.stop(); // never started: closes the lock store
      }
    }
  }

  /** Asks before --forget deletes records; false unless the answer is yes. */
  private boolean confirm(PrintWriter out, WorkerConfig settings, RedriveRequest request) {
    SubscriptionConfig s = settings.subscriptions().get(subscription);
    String source =
        s == null ? "the dead-letter subscription" : DeadLetterRedrive.source(settings, s, request);
    out.print(
        "Forget the DONE record of every key among at most "
            + max
            + " dead letter(s) of "
            + source
            + "? Their effects run again (a deliberate replay). [y/N] ");
    out.flush();
    try {
      String answer = parent.input().readLine();
      return answer != null && answer.trim().toLowerCase(Locale.ROOT).matches("y|yes");
    } catch (IOException e) {
      return false;
    }
  }
}
