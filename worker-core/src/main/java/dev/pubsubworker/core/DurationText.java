package dev.pubsubworker.core;

import java.time.Duration;

/**
 * A duration the way a config file writes it and an operator reads it: {@code 250ms}, {@code 30s},
 * {@code 2m}, {@code 24h}, {@code 7d} — the largest whole unit, never ISO-8601's {@code PT2M}. One
 * format for config errors and log lines alike, so a value reads the same wherever it is shown.
 *
 * <p>The unit is the largest that divides the duration exactly (days only from two days on, since
 * {@code 24h} is how a ttl is usually written); a duration with a fraction of a millisecond, and
 * zero, are shown in nanoseconds ({@code 1500ns}, {@code 0ns}). Stateless and thread-safe.
 */
public final class DurationText {

  private DurationText() {}

  /**
   * The short form of {@code d}, e.g. {@code "2m"} for {@code Duration.ofMinutes(2)}.
   *
   * @throws NullPointerException if {@code d} is null
   */
  public static String of(Duration d) {
    if (d.toNanosPart() % 1_000_000 != 0 || d.isZero()) {
      return d.toNanos() + "ns";
    }
    if (d.toNanosPart() == 0 && d.toSeconds() % 86_400 == 0 && d.toSeconds() >= 2 * 86_400) {
      return d.toSeconds() / 86_400 + "d";
    }
    long ms = d.toMillis();
    if (ms % 3_600_000 == 0) {
      return ms / 3_600_000 + "h";
    }
    if (ms % 60_000 == 0) {
      return ms / 60_000 + "m";
    }
    if (ms % 1_000 == 0) {
      return ms / 1_000 + "s";
    }
    return ms + "ms";
  }
}
