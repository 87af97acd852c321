package dev.pubsubworker.runtime.config;

/**
 * Which JSON log lines carry {@code logging.googleapis.com/sourceLocation}, the class, method, file
 * and line that wrote them ({@code pubsub-worker.logging.source-location}). Finding them walks the
 * logging thread's stack, once per line that carries them; the text format never does.
 */
public enum LogSourceLocation {
  /** No line. */
  NONE,
  /** WARN and ERROR lines: the ones read to find what failed. */
  WARN,
  /** Every line. */
  ALL
}
