package dev.pubsubworker.pubsub;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Decides which of many repeats of one kind of log line are written: the first of each kind, then
 * at most one per {@code interval}; each written line learns how many of its kind were held back
 * since the previous one, so it can say so. For lines an outage or a poison message would otherwise
 * repeat thousands of times (lock-store failures, unkeyed messages).
 *
 * <pre>{@code
 * RepeatLimiter.Decision d = limiter.check("store:" + cause.getClass().getName());
 * if (d.write()) {
 *   log.error("lock store failed: {}{}", cause.getMessage(), d.suppressedNote(), cause);
 * } else {
 *   log.debug("lock store failed: {}", cause.getMessage(), cause);
 * }
 * }</pre>
 *
 * <p>Kinds are kept for the life of the limiter, so use a bounded set of them (a subscription, an
 * exception class), never a message id or a key. Thread-safe.
 */
final class RepeatLimiter {

  /**
   * Whether to write a line, and how many lines of its kind were held back before it.
   *
   * @param write true for the line to write
   * @param suppressed lines of the kind held back since the last written one (0 unless {@code
   *     write})
   */
  record Decision(boolean write, long suppressed) {

    /** {@code " (N similar lines suppressed since the last one)"}, or "" when none was. */
    String suppressedNote() {
      return suppressed == 0
          ? ""
          : " (" + suppressed + " similar line(s) suppressed since the last one)";
    }
  }

  private final Duration interval;
  private final Clock clock;
  private final Map<String, Window> windows = new ConcurrentHashMap<>();

  /**
   * @param interval the least time between two written lines of one kind; positive
   * @param clock the clock intervals are measured on
   * @throws IllegalArgumentException if {@code interval} is not positive
   */
  RepeatLimiter(Duration interval, Clock clock) {
    if (interval.isZero() || interval.isNegative()) {
      throw new IllegalArgumentException("interval must be positive, but was " + interval);
    }
    this.interval = interval;
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /** Records one line of {@code kind} and decides whether it is written. */
  Decision check(String kind) {
    Instant now = clock.instant();
    Decision[] decision = new Decision[1];
    windows.compute(
        kind,
        (k, w) -> {
          if (w == null || !now.isBefore(w.writtenAt.plus(interval))) {
            decision[0] = new Decision(true, w == null ? 0 : w.suppressed);
            return new Window(now, 0);
          }
          decision[0] = new Decision(false, 0);
          return new Window(w.writtenAt, w.suppressed + 1);
        });
    return decision[0];
  }

  private record Window(Instant writtenAt, long suppressed) {}
}
