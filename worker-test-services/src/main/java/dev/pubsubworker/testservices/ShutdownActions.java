package dev.pubsubworker.testservices;

import dev.pubsubworker.emulators.ManagedProcess;
import java.util.ArrayDeque;
import java.util.Deque;

/**
 * Closes what the test services started, once, at JVM exit, newest first (clients before the
 * servers they talk to). One shutdown hook for all of them, so the order is deterministic.
 *
 * <p>Thread-safe. A failing action is reported on stderr and does not stop the others.
 */
final class ShutdownActions {

  private static final Deque<Action> ACTIONS = new ArrayDeque<>();
  private static boolean hookInstalled;

  private record Action(String name, AutoCloseable closeable) {}

  private ShutdownActions() {}

  /** Closes {@code closeable} at JVM exit; {@code name} appears in the report if it fails. */
  static synchronized void register(String name, AutoCloseable closeable) {
    if (!hookInstalled) {
      Runtime.getRuntime()
          .addShutdownHook(new Thread(ShutdownActions::runAll, "test-services-shutdown"));
      hookInstalled = true;
    }
    ACTIONS.push(new Action(name, closeable));
  }

  /**
   * Stops {@code process} (its whole tree) at JVM exit, named {@code name (pid N)} in the report.
   *
   * @return {@code process}
   */
  static ManagedProcess stopAtExit(String name, ManagedProcess process) {
    register(name + " (pid " + process.pid() + ")", process);
    return process;
  }

  private static void runAll() {
    while (true) {
      Action action;
      synchronized (ShutdownActions.class) {
        action = ACTIONS.poll();
      }
      if (action == null) {
        return;
      }
      try {
        action.closeable().close();
      } catch (Exception | LinkageError e) {
        // Shutdown must go on: a client that cannot close must not leave an emulator running.
        System.err.println(ResolutionReport.PREFIX + "could not stop " + action.name() + ": " + e);
      }
    }
  }
}
