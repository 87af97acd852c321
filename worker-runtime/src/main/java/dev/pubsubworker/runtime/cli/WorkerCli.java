package dev.pubsubworker.runtime.cli;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;

/**
 * The {@code pubsub-worker} command line: the main class of the executable jar.
 *
 * <pre>
 * java -jar pubsub-worker.jar run --config worker.conf
 * java -jar pubsub-worker.jar check-config --config worker.conf
 * </pre>
 */
@Command(
    name = "pubsub-worker",
    mixinStandardHelpOptions = true,
    versionProvider = WorkerCli.Version.class,
    description = "Exactly-once processing for Google Cloud Pub/Sub pull subscribers.",
    subcommands = {
      RunCommand.class,
      CheckConfigCommand.class,
      InspectCommand.class,
      ForgetCommand.class,
      PurgeCommand.class,
      PublishCommand.class,
      DemoCommand.class
    })
public final class WorkerCli implements Runnable {

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  private final BufferedReader input;

  private WorkerCli(BufferedReader input) {
    this.input = input;
  }

  /** Where commands read answers from (confirmation prompts). */
  BufferedReader input() {
    return input;
  }

  /** Runs the command line and exits the JVM with its exit code. */
  public static void main(String[] args) {
    LogStream.chooseFor(args);
    System.exit(
        execute(
            args,
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)),
            new PrintWriter(System.out, true),
            new PrintWriter(System.err, true)));
  }

  /**
   * Runs the command line without exiting, for tests and embedding.
   *
   * @return the exit code
   */
  public static int execute(String[] args, BufferedReader in, PrintWriter out, PrintWriter err) {
    CommandLine cli = new CommandLine(new WorkerCli(in));
    cli.setOut(out);
    cli.setErr(err);
    cli.setParameterExceptionHandler(
        (ex, a) -> {
          ex.getCommandLine().getErr().println("error: " + ex.getMessage());
          ex.getCommandLine()
              .getErr()
              .println("(see: pubsub-worker " + ex.getCommandLine().getCommandName() + " --help)");
          return ExitCodes.BAD_CONFIG;
        });
    return cli.execute(args);
  }

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }

  /** The version from the jar's manifest. */
  static final class Version implements IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = WorkerCli.class.getPackage().getImplementationVersion();
      return new String[] {"pubsub-worker " + (v == null ? "(development build)" : v)};
    }
  }
}
