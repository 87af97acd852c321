package dev.pubsubworker.pubsub;

import dev.pubsubworker.core.Backoff;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * When a parked delivery retries its claim: a bounded, jittered, doubling backoff that never waits
 * past the holder's lease expiry (plus jitter) nor past the delivery's {@code in-progress-max-wait}
 * deadline.
 *
 * <p>The delay before poll {@code n} (0-based) is {@code min(FIRST * 2^n, MAX_POLL)} ({@link
 * #POLLS}: the project's {@link Backoff}, without its jitter, since this one is added after the cut
 * to the lease expiry), cut down to the time until the holder's lease expires when that is known
 * and sooner, plus a jitter of up to {@link #JITTER_FLOOR} + 20% of that delay (so waiters of one
 * key in several processes do not retry in step), and finally cut down to the time left until the
 * deadline. A lease that has already lapsed gives a retry after the jitter alone. Pure and
 * thread-safe.
 */
final class ParkBackoff {

  /** The wait before the first retry. */
  static final Duration FIRST = Duration.ofMillis(200);

  /** The longest wait between two retries of one parked delivery. */
  static final Duration MAX_POLL = Duration.ofSeconds(5);

  /** The delays before jitter: {@link #FIRST} doubling per poll up to {@link #MAX_POLL}. */
  static final Backoff POLLS = Backoff.exponential(FIRST, MAX_POLL).withJitter(Backoff.Jitter.NONE);

  /** The least jitter range added to every delay. */
  static final Duration JITTER_FLOOR = Duration.ofMillis(50);

  /**
   * The latest a parked delivery retries its claim after the holder's lease lapsed: the longest
   * jitter, that of a poll cut down to the lease expiry from at most {@link #MAX_POLL} (50ms + 20%
   * of 5s = 1.05s). Part of the README's time to reprocess after a crash.
   */
  static final Duration MAX_LATENESS = JITTER_FLOOR.plus(MAX_POLL.dividedBy(5));

  private ParkBackoff() {}

  /**
   * The wait before the next retry.
   *
   * @param polls how many retries this delivery already made (0 before the first)
   * @param untilLeaseExpiry the time until the holder's lease lapses (negative if it already did),
   *     or null if unknown
   * @param untilDeadline the time left until the delivery's in-progress-max-wait deadline
   * @param random a number in [0, 1) that picks the jitter
   * @return a non-negative delay, never beyond {@code untilDeadline}
   */
  static Duration delay(
      int polls, @Nullable Duration untilLeaseExpiry, Duration untilDeadline, double random) {
    long base = POLLS.delay(Math.max(polls, 0)).toNanos();
    if (untilLeaseExpiry != null) {
      base = Math.min(base, Math.max(0, untilLeaseExpiry.toNanos()));
    }
    long jitterRange = JITTER_FLOOR.toNanos() + base / 5;
    long delay = base + (long) (Math.min(Math.max(random, 0), 1) * jitterRange);
    return Duration.ofNanos(Math.max(0, Math.min(delay, untilDeadline.toNanos())));
  }
}
