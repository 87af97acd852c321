package dev.pubsubworker.runtime.cli;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;

/**
 * The {@code pubsub-worker} command line: {@code run}, {@code check-config}, {@code inspect},
 * {@code forget}, {@code purge}, {@code redrive}, {@code publish} and {@code create-resources}. An
 * application adds its own subcommands through {@link #main(List, String[])} and {@link
 * #execute(List, String[], BufferedReader, PrintWriter, PrintWriter)}; the executable jar, {@code
 * worker-app/target/pubsub-worker.jar}, adds {@code demo}:
 *
 * <pre>
 * java -jar worker-app/target/pubsub-worker.jar run --config worker.conf
 * java -jar worker-app/target/pubsub-worker.jar check-config --config worker.conf
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
      RedriveCommand.class,
      PublishCommand.class,
      CreateResourcesCommand.class
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
    main(List.of(), args);
  }

  /**
   * Runs the command line with {@code extraCommands} added as subcommands, and exits the JVM with
   * its exit code.
   *
   * @param extraCommands instances of {@link Command}-annotated classes, each named by its
   *     annotation
   * @throws picocli.CommandLine.InitializationException if one is not a command, or its name is
   *     taken
   */
  public static void main(List<?> extraCommands, String[] args) {
    LogStream.chooseFor(args);
    System.exit(
        execute(
            extraCommands,
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
    return execute(List.of(), args, in, out, err);
  }

  /**
   * Runs the command line with {@code extraCommands} added as subcommands, without exiting.
   *
   * @param extraCommands instances of {@link Command}-annotated classes, each named by its
   *     annotation; a fresh instance per call, as picocli sets their options
   * @return the exit code
   * @throws picocli.CommandLine.InitializationException if one is not a command, or its name is
   *     taken
   */
  public static int execute(
      List<?> extraCommands, String[] args, BufferedReader in, PrintWriter out, PrintWriter err) {
    CommandLine cli = new CommandLine(new WorkerCli(in));
    extraCommands.forEach(cli::addSubcommand);
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

  /**
   * The version from the manifest of the jar that holds this class: {@code pubsub-worker
   * <version>}, or {@code (development build)} outside a jar. Added commands name it as their
   * {@code versionProvider}.
   */
  public static final class Version implements IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = WorkerCli.class.getPackage().getImplementationVersion();
      return new String[] {"pubsub-worker " + (v == null ? "(development build)" : v)};
    }
  }
}
