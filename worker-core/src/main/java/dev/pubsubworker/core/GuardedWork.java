package dev.pubsubworker.core;

/**
 * The work a guard runs under a claim. It may throw a checked exception of type {@code E}; the
 * guard releases the claim and rethrows it unchanged.
 *
 * @param <T> what the work returns ({@code Void} and {@code return null} for side effects only)
 * @param <E> the checked exception it may throw ({@code RuntimeException} if none)
 */
@FunctionalInterface
public interface GuardedWork<T, E extends Exception> {

  /**
   * Runs the work.
   *
   * @param context the claim's key, fencing token and lease state
   * @return the work's result
   * @throws E whatever the work throws
   */
  T run(WorkContext context) throws E;
}
