package dev.pubsubworker.runtime.cli;

import java.util.Set;

/**
 * Which stream the log goes to: stdout for the long-running commands ({@code run}, {@code demo}),
 * whose output is the log; stderr for every other command, so that their stdout carries only what
 * they print (e.g. {@code inspect --json} is exactly one JSON object). {@code logback.xml} reads
 * the choice from the system property {@value #PROPERTY}, which a user may also set.
 */
final class LogStream {

  /** The system property {@code logback.xml}'s console appender takes its target from. */
  static final String PROPERTY = "pubsub-worker-log-target";

  private static final Set<String> LOGGING_TO_STDOUT = Set.of("run", "demo");

  private LogStream() {}

  /**
   * Chooses the stream for the command in {@code args}. Must run before the first logger is
   * created, since logback reads the property once, when it configures itself.
   */
  static void chooseFor(String[] args) {
    if (System.getProperty(PROPERTY) != null) {
      return;
    }
    String command = "";
    for (String arg : args) {
      if (!arg.startsWith("-")) {
        command = arg;
        break;
      }
    }
    System.setProperty(PROPERTY, LOGGING_TO_STDOUT.contains(command) ? "System.out" : "System.err");
  }
}
