package dev.pubsubworker.app;

import dev.pubsubworker.runtime.cli.WorkerCli;
import java.io.BufferedReader;
import java.io.PrintWriter;
import java.util.List;

/**
 * The main class of the executable jar, {@code worker-app/target/pubsub-worker.jar}: the runtime's
 * command line ({@link WorkerCli}: {@code run}, {@code check-config}, {@code inspect}, {@code
 * forget}, {@code purge}, {@code publish}) plus {@code demo}, which runs the example orders plugin
 * against a hostile load.
 *
 * <pre>
 * java -jar worker-app/target/pubsub-worker.jar demo
 * java -jar worker-app/target/pubsub-worker.jar run --config worker.conf
 * </pre>
 */
public final class WorkerApp {

  private WorkerApp() {}

  /** Runs the command line and exits the JVM with its exit code. */
  public static void main(String[] args) {
    WorkerCli.main(commands(), args);
  }

  /**
   * Runs the command line without exiting, for tests and embedding.
   *
   * @return the exit code
   */
  public static int execute(String[] args, BufferedReader in, PrintWriter out, PrintWriter err) {
    return WorkerCli.execute(commands(), args, in, out, err);
  }

  /** The commands the app adds to the runtime's, fresh instances each time. */
  private static List<Object> commands() {
    return List.of(new DemoCommand());
  }
}
