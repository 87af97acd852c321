package dev.pubsubworker.testservices;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Tries a service's sources in order and returns the first that has it, or the single "unavailable"
 * line: {@code "<service> unavailable: <remedy> [tried: <source>: <reason>; ...]"}.
 */
final class ServiceResolver {

  /** One source to try. */
  @FunctionalInterface
  interface SourceAttempt<T> {
    AttemptResult<T> attempt() throws Exception;
  }

  /** A source and how to ask it. */
  record Step<T>(ServiceSource source, SourceAttempt<T> attempt) {}

  private ServiceResolver() {}

  /**
   * Resolves {@code kind} by trying {@code steps} in order, skipping sources that {@code
   * TEST_SERVICES_SOURCES} disables. An attempt that throws counts as "not here" with the exception
   * as the reason.
   */
  static <T> Resolution<T> resolve(
      ServiceKind kind, ServiceEnvironment environment, List<Step<T>> steps) {
    Set<ServiceSource> enabled = environment.enabledSources();
    List<String> tried = new ArrayList<>();
    for (Step<T> step : steps) {
      String label = step.source().label();
      if (!enabled.contains(step.source())) {
        tried.add(label + ": off (" + ServiceEnvironment.SOURCES_VARIABLE + ")");
        continue;
      }
      AttemptResult<T> result;
      try {
        result = step.attempt().attempt();
      } catch (Exception | LinkageError e) {
        result = AttemptResult.notHere(describe(e));
      }
      if (result instanceof AttemptResult.Found<T> found) {
        return new Resolution.Resolved<>(found.service(), step.source(), found.detail());
      }
      if (result instanceof AttemptResult.Misconfigured<T> misconfigured) {
        return new Resolution.Unavailable<>(
            oneLine(kind.displayName() + " unavailable: " + misconfigured.reason()));
      }
      String reason = ((AttemptResult.NotHere<T>) result).reason();
      if (!reason.isEmpty()) {
        tried.add(label + ": " + reason);
      }
    }
    String line = kind.displayName() + " unavailable: " + kind.remedy();
    if (!tried.isEmpty()) {
      line += " [tried " + String.join("; ", tried) + "]";
    }
    return new Resolution.Unavailable<>(oneLine(line));
  }

  /** An exception as a short reason: its message, or its type when it has none. */
  static String describe(Throwable e) {
    String message = e.getMessage();
    if (message == null || message.isBlank()) {
      return e.getClass().getSimpleName();
    }
    return oneLine(message);
  }

  static String oneLine(String text) {
    return text.strip().replaceAll("\\s*\\R\\s*", " ");
  }
}
