package dev.pubsubworker.core;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * Decides which of many repeats of one kind of warning are written: the first, then at most one per
 * interval, each learning how many were held back since the one before (so it can say so). For a
 * warning that an overloaded store could otherwise repeat for every call.
 *
 * <p>Thread-safe.
 */
final class RepeatedWarning {

  private final Duration interval;
  private final Clock clock;
  private @Nullable Instant writtenAt;
  private long suppressed;

  RepeatedWarning(Duration interval, Clock clock) {
    this.interval = interval;
    this.clock = clock;
  }

  /**
   * Records one warning.
   *
   * @return how many were held back since the last written one when this one is to be written (0 or
   *     more), or -1 when this one is held back
   */
  synchronized long check() {
    Instant now = clock.instant();
    Instant last = writtenAt;
    if (last == null || !now.isBefore(last.plus(interval))) {
      long held = suppressed;
      writtenAt = now;
      suppressed = 0;
      return held;
    }
    suppressed++;
    return -1;
  }

  /** {@code " (N similar line(s) suppressed since the last one)"}, or "" for none. */
  static String note(long suppressed) {
    return suppressed <= 0
        ? ""
        : " (" + suppressed + " similar line(s) suppressed since the last one)";
  }
}
