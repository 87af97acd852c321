package dev.pubsubworker.runtime.config;

/**
 * {@code pubsub-worker.logging}.
 *
 * @param format text or json
 * @param keyFormat how lock keys appear in log lines
 * @param sourceLocation which JSON lines carry the source location that wrote them
 */
public record LoggingConfig(
    LogFormat format, KeyLogFormat keyFormat, LogSourceLocation sourceLocation) {}
