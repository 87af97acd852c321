package dev.pubsubworker.testservices;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.function.Consumer;

/**
 * Prints the resolution report: one line per service, the first time a test asks for it, to stderr
 * (Surefire keeps it in the test's {@code -output.txt}) and appended to {@code resolution.log} in
 * the work folder, so every run leaves a record of which source each service came from.
 *
 * <p>Thread-safe.
 */
final class ResolutionReport implements Consumer<String> {

  /** The prefix of every line the test services print. */
  static final String PREFIX = "[test-services] ";

  private final Path logFile;

  ResolutionReport(Path logFile) {
    this.logFile = logFile;
  }

  @Override
  public synchronized void accept(String line) {
    String printed = PREFIX + line;
    System.err.println(printed);
    try {
      Files.createDirectories(logFile.getParent());
      Files.writeString(
          logFile,
          ProcessHandle.current().pid() + " " + printed + System.lineSeparator(),
          StandardCharsets.UTF_8,
          StandardOpenOption.CREATE,
          StandardOpenOption.APPEND);
    } catch (IOException e) {
      // The report on stderr is the one that matters; a read-only target/ must not fail tests.
      System.err.println(PREFIX + "could not append to " + logFile + ": " + e.getMessage());
    }
  }
}
