package dev.pubsubworker.runtime.cli;

/** The process exit codes of every command. */
final class ExitCodes {
  /** Success. */
  static final int OK = 0;

  /** An unexpected failure (a bug or an unreachable dependency). */
  static final int FAILURE = 1;

  /** The configuration (or a command-line argument) is invalid. */
  static final int BAD_CONFIG = 2;

  /** A Pub/Sub subscription or the lock store is unavailable. */
  static final int UNAVAILABLE = 3;

  /** The demo found a doubled or a lost effect. */
  static final int NOT_EXACTLY_ONCE = 4;

  /** Stopped by a second signal, without waiting. */
  static final int HALTED = 130;

  private ExitCodes() {}
}
