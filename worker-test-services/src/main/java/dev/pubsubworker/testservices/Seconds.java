package dev.pubsubworker.testservices;

import java.time.Duration;
import java.util.Locale;

/** Formats a duration for the resolution report, e.g. {@code "1.7 s"}. */
final class Seconds {

  private Seconds() {}

  static String format(Duration duration) {
    return String.format(Locale.ROOT, "%.1f s", duration.toMillis() / 1000.0);
  }
}
