package dev.pubsubworker.runtime.config;

/** The format of log lines ({@code pubsub-worker.logging.format}). */
public enum LogFormat {
  /** Plain text for people. */
  TEXT,
  /** One JSON object per line, with the fields Google Cloud Logging parses. */
  JSON
}
