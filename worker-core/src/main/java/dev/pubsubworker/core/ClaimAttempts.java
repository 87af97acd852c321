package dev.pubsubworker.core;

import java.time.Duration;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The guard's claim with retries: a claim that fails in the store ({@link LockBackendException}) is
 * retried up to {@code retries} times with the same request, so with the same claim token, after a
 * wait of {@code backoff} doubled per retry. Retrying with the same token is safe: if the failed
 * attempt was written and only its response was lost, the retry re-affirms that claim instead of
 * locking the caller out until the lease lapses.
 *
 * <p>Thread-safe (stateless between calls).
 */
final class ClaimAttempts {

  // Under the guard's logger: its lines are the guard's, and log configuration and alerts name it.
  private static final Logger log = LoggerFactory.getLogger(IdempotencyGuard.class);

  private final LockBackend backend;
  private final GuardEvents events;
  private final int retries;
  private final Duration backoff;
  private final UnaryOperator<String> keyLogFormat;

  ClaimAttempts(
      LockBackend backend,
      GuardEvents events,
      int retries,
      Duration backoff,
      UnaryOperator<String> keyLogFormat) {
    this.backend = backend;
    this.events = events;
    this.retries = retries;
    this.backoff = backoff;
    this.keyLogFormat = keyLogFormat;
  }

  /**
   * Claims, retrying store failures; reports each attempt and a won claim to the listeners.
   *
   * @throws LockBackendException the last failure once the retries are spent, or the current one if
   *     the thread is interrupted while waiting to retry (the interrupt is re-asserted)
   */
  ClaimResult claim(ClaimRequest request) {
    for (int attempt = 0; ; attempt++) {
      long started = System.nanoTime();
      try {
        ClaimResult result = backend.claim(request);
        events.backendCall(GuardListener.Verb.CLAIM, started, true);
        if (result instanceof ClaimResult.Won won) {
          events.claimed(request.key(), won.claim().fence(), won.claim().fence() > 1);
        }
        return result;
      } catch (LockBackendException e) {
        events.backendCall(GuardListener.Verb.CLAIM, started, false);
        if (attempt >= retries) {
          throw e;
        }
        log.debug(
            "claim failed for key {}; retrying with the same token",
            keyLogFormat.apply(request.key()));
        try {
          Thread.sleep(backoff.toMillis() << Math.min(attempt, 10));
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          e.addSuppressed(interrupted);
          throw e;
        }
      }
    }
  }
}
