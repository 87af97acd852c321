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

  /** Longer problem texts (a huge value echoed back) are cut here, so each stays one line. */
  static final int MAX_PROBLEM_LENGTH = 800;

  /** Cuts {@code problem} to {@value #MAX_PROBLEM_LENGTH} characters and to its first line. */
  public ConfigProblem {
    String firstLine = problem.lines().findFirst().orElse("");
    if (firstLine.length() > MAX_PROBLEM_LENGTH || !firstLine.equals(problem)) {
      problem =
          firstLine.substring(0, Math.min(firstLine.length(), MAX_PROBLEM_LENGTH))
              + "... ("
              + problem.length()
              + " characters)";
    }
  }

  /** The one-line form: {@code path: problem (origin)}. */
  @Override
  public String toString() {
    return path + ": " + problem + (origin.isEmpty() ? "" : " (" + origin + ")");
  }
}
