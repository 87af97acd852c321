package dev.pubsubworker.emulators;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntFunction;

/**
 * A server process started on a free loopback port, its output (stdout and stderr) in a log file
 * rather than on the console, waited for until a readiness probe passes, and stopped with its whole
 * process tree (found by PID through {@link ProcessHandle#descendants()}) by {@link #close()}.
 *
 * <p>If the port was taken between choosing it and the server binding it (the server exits and its
 * log says {@code Address already in use} or {@code BindException}), the start is retried on a
 * fresh port, at most {@value #PORT_ATTEMPTS} times.
 *
 * <p>Nothing stops the process at JVM exit on its own: whoever starts one closes it, or registers
 * it with a shutdown hook of their own.
 *
 * <p>Thread-safe.
 */
public final class ManagedProcess implements AutoCloseable {

  /** Checks whether the server on {@code port} answers. */
  @FunctionalInterface
  public interface ReadinessProbe {
    /**
     * Returns normally when the server on {@code port} (of 127.0.0.1) answers.
     *
     * @throws IOException when it does not (yet), with a message saying what was seen; the last
     *     such message is quoted if the start times out
     */
    void check(int port) throws IOException;
  }

  private static final int PORT_ATTEMPTS = 3;
  private static final long POLL_INTERVAL_MILLIS = 50;
  private static final int STOP_GRACE_SECONDS = 5;

  private final Process process;
  private final int port;
  private final Path logFile;
  private final Duration startupTime;

  private ManagedProcess(Process process, int port, Path logFile, Duration startupTime) {
    this.process = process;
    this.port = port;
    this.logFile = logFile;
    this.startupTime = startupTime;
  }

  /**
   * Starts {@code command.apply(port)} on a free loopback port, in {@code workDir}, and waits until
   * {@code readiness} passes. The caller owns the returned process and must {@link #close()} it.
   *
   * @param name file-name-safe name; the log is {@code <workDir>/<name>-<port>.log}, and error
   *     messages name the process by it
   * @param workDir the process's working directory and where its log goes; created if missing
   * @param command the command line for a port
   * @param environment variables added to this JVM's environment for the process
   * @param readiness passes once the server on the port answers
   * @param timeout how long the server may take to answer, from starting it
   * @throws IOException when it cannot start, exits early, finds its port taken {@value
   *     #PORT_ATTEMPTS} times, or does not answer within {@code timeout}; the message names the log
   *     file. The process tree is stopped first.
   */
  public static ManagedProcess start(
      String name,
      Path workDir,
      IntFunction<List<String>> command,
      Map<String, String> environment,
      ReadinessProbe readiness,
      Duration timeout)
      throws IOException {
    Files.createDirectories(workDir);
    PortTakenException portTaken = null;
    for (int attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
      int port = Probes.freeLoopbackPort();
      Path logFile = workDir.resolve(name + "-" + port + ".log");
      ProcessBuilder builder =
          new ProcessBuilder(command.apply(port))
              .directory(workDir.toFile())
              .redirectErrorStream(true)
              .redirectOutput(logFile.toFile());
      builder.environment().putAll(environment);
      long started = System.nanoTime();
      Process process;
      try {
        process = builder.start();
      } catch (IOException e) {
        throw new IOException(
            "could not run " + builder.command().get(0) + ": " + e.getMessage(), e);
      }
      process.getOutputStream().close();
      try {
        awaitReady(name, process, port, logFile, readiness, started + timeout.toNanos(), timeout);
      } catch (PortTakenException e) {
        stopTree(process);
        portTaken = e;
        continue;
      } catch (IOException | RuntimeException e) {
        stopTree(process);
        throw e;
      }
      return new ManagedProcess(
          process, port, logFile, Duration.ofNanos(System.nanoTime() - started));
    }
    throw portTaken;
  }

  /** The loopback port the process listens on. */
  public int port() {
    return port;
  }

  /** Where the process's stdout and stderr go. */
  public Path logFile() {
    return logFile;
  }

  /** From starting the process until it first answered. */
  public Duration startupTime() {
    return startupTime;
  }

  /** The process's ID (of the command started, not of its descendants). */
  public long pid() {
    return process.pid();
  }

  /**
   * Stops the process and every descendant: a polite signal first, then, after {@value
   * #STOP_GRACE_SECONDS} seconds, a forcible one. Idempotent.
   */
  @Override
  public void close() {
    stopTree(process);
  }

  private static void stopTree(Process process) {
    // Snapshot the tree first: once a wrapper script dies its children are re-parented and are no
    // longer its descendants.
    List<ProcessHandle> tree = new ArrayList<>(process.descendants().toList());
    tree.add(process.toHandle());
    tree.forEach(ProcessHandle::destroy);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(STOP_GRACE_SECONDS);
    for (ProcessHandle handle : tree) {
      try {
        handle.onExit().get(Math.max(deadline - System.nanoTime(), 0), TimeUnit.NANOSECONDS);
      } catch (TimeoutException | ExecutionException e) {
        handle.destroyForcibly();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        tree.forEach(ProcessHandle::destroyForcibly);
        return;
      }
    }
  }

  private static void awaitReady(
      String name,
      Process process,
      int port,
      Path logFile,
      ReadinessProbe readiness,
      long deadlineNanos,
      Duration timeout)
      throws IOException {
    IOException lastProbe;
    while (true) {
      try {
        readiness.check(port);
        return;
      } catch (IOException e) {
        lastProbe = e;
      }
      boolean exited;
      try {
        exited = process.waitFor(POLL_INTERVAL_MILLIS, TimeUnit.MILLISECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while waiting for " + name + " to answer", e);
      }
      if (exited) {
        String log = readLog(logFile);
        String lower = log.toLowerCase(Locale.ROOT);
        if (lower.contains("address already in use") || lower.contains("bindexception")) {
          throw new PortTakenException(name + " found port " + port + " taken; see " + logFile);
        }
        throw new IOException(
            name
                + " exited with code "
                + process.exitValue()
                + " before answering on 127.0.0.1:"
                + port
                + "; see "
                + logFile
                + lastLine(log));
      }
      if (System.nanoTime() - deadlineNanos > 0) {
        throw new IOException(
            name
                + " did not answer on 127.0.0.1:"
                + port
                + " within "
                + String.format(Locale.ROOT, "%.1f s", timeout.toMillis() / 1000.0)
                + " (last check: "
                + lastProbe.getMessage()
                + "); see "
                + logFile);
      }
    }
  }

  private static String readLog(Path logFile) {
    try {
      return Files.readString(logFile, StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "";
    }
  }

  private static String lastLine(String log) {
    String[] lines = log.strip().split("\\R");
    String last = lines[lines.length - 1].strip();
    return last.isEmpty() ? "" : " (last line: " + last + ")";
  }

  /** The server could not bind its port: retry on another. */
  private static final class PortTakenException extends IOException {
    private static final long serialVersionUID = 1L;

    PortTakenException(String message) {
      super(message);
    }
  }
}
