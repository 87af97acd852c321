package dev.pubsubworker.runtime.cli;

/** The process exit codes of every command, the runtime's and those an application adds. */
public final class ExitCodes {
  /** Success. */
  public static final int OK = 0;

  /** An unexpected failure (a bug or an unreachable dependency). */
  public static final int FAILURE = 1;

  /** The configuration (or a command-line argument) is invalid. */
  public static final int BAD_CONFIG = 2;

  /** A Pub/Sub subscription or the lock store is unavailable. */
  public static final int UNAVAILABLE = 3;

  /** The demo found a doubled or a lost effect. */
  public static final int NOT_EXACTLY_ONCE = 4;

  /** {@code redrive}: some dead letters failed again; they stay on the dead-letter subscription. */
  public static final int FAILED_AGAIN = 5;

  /** Stopped by a second signal, without waiting. */
  public static final int HALTED = 130;

  private ExitCodes() {}
}
