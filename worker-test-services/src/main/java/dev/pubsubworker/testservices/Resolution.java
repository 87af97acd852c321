package dev.pubsubworker.testservices;

/**
 * The outcome of resolving one service: found at a source, or unavailable with the one line that
 * names what to install or set.
 *
 * @param <T> the service type
 */
sealed interface Resolution<T> permits Resolution.Resolved, Resolution.Unavailable {

  /** The service, where it came from, and a short description for the report. */
  record Resolved<T>(T service, ServiceSource source, String detail) implements Resolution<T> {}

  /** No source had it; {@code line} is the single line shown when skipping or failing. */
  record Unavailable<T>(String line) implements Resolution<T> {}
}
