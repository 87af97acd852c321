package dev.pubsubworker.core;

import java.time.Duration;
import java.util.Objects;

/**
 * The checks that every settings class and verb of this project applies to a duration, with one
 * wording for their errors: {@code "lease must be >= 1ms, but was PT0S"}. Backends use them for
 * their own settings so that a bad value reads the same wherever it is refused.
 *
 * <p>Every method returns its argument, so it can be used in an assignment, and throws {@link
 * NullPointerException} (naming the setting) for {@code null} and {@link IllegalArgumentException}
 * for a value out of range. Stateless and thread-safe.
 */
public final class DurationChecks {

  private static final Duration ONE_MILLI = Duration.ofMillis(1);

  private DurationChecks() {}

  /**
   * Requires {@code value} to be at least one millisecond: the resolution every store keeps.
   *
   * @param name the setting's name, as the error message shows it
   * @return {@code value}
   * @throws NullPointerException if {@code value} is null
   * @throws IllegalArgumentException if it is shorter than 1 ms (zero and negative included)
   */
  public static Duration requireAtLeastOneMilli(String name, Duration value) {
    Objects.requireNonNull(value, name);
    if (value.compareTo(ONE_MILLI) < 0) {
      throw new IllegalArgumentException(name + " must be >= 1ms, but was " + value);
    }
    return value;
  }

  /**
   * Requires {@code min <= value <= max}.
   *
   * @param name the setting's name, as the error message shows it
   * @return {@code value}
   * @throws NullPointerException if {@code value} is null
   * @throws IllegalArgumentException if it is outside the range; the message names both bounds
   */
  public static Duration requireBetween(String name, Duration value, Duration min, Duration max) {
    Objects.requireNonNull(value, name);
    if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
      throw new IllegalArgumentException(
          name + " must be between " + min + " and " + max + ", but was " + value);
    }
    return value;
  }
}
