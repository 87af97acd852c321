package dev.pubsubworker.runtime.config;

/**
 * {@code pubsub-worker.logging}.
 *
 * @param format text or json
 * @param keyFormat how lock keys appear in log lines
 */
public record LoggingConfig(LogFormat format, KeyLogFormat keyFormat) {}
