/**
 * The worker's settings, read eagerly from HOCON (Typesafe Config) under {@code pubsub-worker}.
 * Defaults live only in the runtime's {@code reference.conf}; {@link
 * dev.pubsubworker.runtime.config.WorkerConfig#load} reports every problem at once, each with its
 * path and origin. Depends on nothing else in the runtime.
 */
package dev.pubsubworker.runtime.config;
