package dev.pubsubworker.runtime.config;

/**
 * One thing wrong with the configuration.
 *
 * @param path the full setting path, e.g. {@code pubsub-worker.subscriptions.orders.lease}
 * @param problem what is wrong and what was given, e.g. {@code "expected a duration such as 30s,
 *     but got 'soon'"}
 * @param origin where the value came from (file and line, or "environment variable X"), or empty
 */
public record ConfigProblem(String path, String problem, String origin) {

  /** The one-line form: {@code path: problem (origin)}. */
  @Override
  public String toString() {
    return path + ": " + problem + (origin.isEmpty() ? "" : " (" + origin + ")");
  }
}
