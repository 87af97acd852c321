package dev.pubsubworker.testservices;

/**
 * What one source said when asked for a service.
 *
 * @param <T> the service type
 */
sealed interface AttemptResult<T>
    permits AttemptResult.Found, AttemptResult.NotHere, AttemptResult.Misconfigured {

  /** The source has it: resolution stops here. */
  record Found<T>(T service, String detail) implements AttemptResult<T> {}

  /**
   * The source does not have it: try the next one. An empty reason (the source was simply not
   * configured, e.g. its environment variable is unset) is left out of the "tried" list.
   */
  record NotHere<T>(String reason) implements AttemptResult<T> {}

  /**
   * The source was explicitly configured but is broken (an environment variable names a server that
   * does not answer): resolution stops, and the service is unavailable with this reason, so a typo
   * is never papered over by a silent fallback.
   */
  record Misconfigured<T>(String reason) implements AttemptResult<T> {}

  static <T> AttemptResult<T> found(T service, String detail) {
    return new Found<>(service, detail);
  }

  static <T> AttemptResult<T> notHere(String reason) {
    return new NotHere<>(reason);
  }

  static <T> AttemptResult<T> notConfigured() {
    return new NotHere<>("");
  }

  static <T> AttemptResult<T> misconfigured(String reason) {
    return new Misconfigured<>(reason);
  }
}
