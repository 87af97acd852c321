package dev.pubsubworker.core;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.DoubleSupplier;

/**
 * A capped exponential backoff: how long to wait before a retry. The one backoff of this project
 * (the guard's claim retry, the SQL and Datastore backends' retries and the parking of a held key
 * are all built on it).
 *
 * <p>Before retry {@code attempt} (0 for the first retry), the wait before jitter is {@code
 * min(cap, initial × multiplier^attempt)} — {@link #ceiling(int)} — and {@link #delay(int)} draws
 * the actual wait from it with the {@link Jitter}:
 *
 * <ul>
 *   <li>{@link Jitter#NONE}: exactly the ceiling;
 *   <li>{@link Jitter#FULL} (the default): uniformly in {@code [0, ceiling)};
 *   <li>{@link Jitter#EQUAL}: uniformly in {@code [ceiling/2, ceiling)}.
 * </ul>
 *
 * So no wait ever exceeds {@link #cap()}, at any attempt (no overflow: a huge attempt gives the
 * cap), and {@link #maxTotal(int)} bounds the time a caller can spend waiting over a number of
 * retries. Full jitter is the default because it spreads clients that failed together (one store
 * outage, many workers) the most; equal jitter keeps a floor of half the ceiling.
 *
 * <p>The randomness is injected: a {@link DoubleSupplier} of numbers in {@code [0, 1)} (values
 * outside are clamped into it, NaN counts as 0); by default {@link ThreadLocalRandom}, so tests can
 * make every wait deterministic with e.g. {@code () -> 0.5}.
 *
 * <p>Immutable and thread-safe if the randomness is. Equality compares the four parameters
 * (initial, multiplier, cap, jitter), not the source of randomness.
 */
public final class Backoff {

  /** How a wait is drawn from its ceiling. */
  public enum Jitter {
    /** The wait is the ceiling itself: retries of several clients stay in step. */
    NONE,
    /** The wait is uniform in {@code [0, ceiling)}: the widest spread. */
    FULL,
    /** The wait is uniform in {@code [ceiling/2, ceiling)}: spread, with a floor. */
    EQUAL
  }

  /** The jitter {@link #exponential} gives: {@link Jitter#FULL}. */
  public static final Jitter DEFAULT_JITTER = Jitter.FULL;

  /** The multiplier {@link #exponential} gives: 2 (the ceiling doubles per retry). */
  public static final double DEFAULT_MULTIPLIER = 2.0;

  /**
   * The longest cap accepted: one day. A longer wait between two retries is a configuration
   * mistake, not a backoff.
   */
  public static final Duration MAX_CAP = Duration.ofDays(1);

  private final Duration initial;
  private final double multiplier;
  private final Duration cap;
  private final Jitter jitter;
  private final DoubleSupplier random;
  private final long initialNanos;
  private final long capNanos;

  private Backoff(
      Duration initial, double multiplier, Duration cap, Jitter jitter, DoubleSupplier random) {
    DurationChecks.requireBetween("initial", initial, Duration.ZERO, MAX_CAP);
    DurationChecks.requireBetween("cap", cap, initial, MAX_CAP);
    if (!(multiplier >= 1) || Double.isInfinite(multiplier)) {
      throw new IllegalArgumentException(
          "multiplier must be a finite number >= 1, but was " + multiplier);
    }
    this.initial = initial;
    this.multiplier = multiplier;
    this.cap = cap;
    this.jitter = Objects.requireNonNull(jitter, "jitter");
    this.random = Objects.requireNonNull(random, "random");
    this.initialNanos = initial.toNanos();
    this.capNanos = cap.toNanos();
  }

  /**
   * A backoff from {@code initial}, doubling per retry ({@link #DEFAULT_MULTIPLIER}) up to {@code
   * cap}, with {@link #DEFAULT_JITTER full jitter} on {@link ThreadLocalRandom}.
   *
   * @param initial the ceiling of the first wait; between zero and {@link #MAX_CAP}
   * @param cap the longest wait; between {@code initial} and {@link #MAX_CAP}
   * @throws NullPointerException if either is null (the message names it)
   * @throws IllegalArgumentException if either is out of range (the message names it)
   */
  public static Backoff exponential(Duration initial, Duration cap) {
    return new Backoff(
        initial, DEFAULT_MULTIPLIER, cap, DEFAULT_JITTER, Backoff::threadLocalRandom);
  }

  /**
   * This backoff with another growth factor per retry.
   *
   * @param value finite and at least 1 (1 gives a constant wait)
   * @throws IllegalArgumentException if {@code value} is below 1, infinite or NaN
   */
  public Backoff withMultiplier(double value) {
    return new Backoff(initial, value, cap, jitter, random);
  }

  /** This backoff with another jitter. */
  public Backoff withJitter(Jitter value) {
    return new Backoff(initial, multiplier, cap, value, random);
  }

  /**
   * This backoff drawing its jitter from {@code value}, which returns numbers in {@code [0, 1)}.
   */
  public Backoff withRandom(DoubleSupplier value) {
    return new Backoff(initial, multiplier, cap, jitter, value);
  }

  /** The ceiling of the first wait. */
  public Duration initial() {
    return initial;
  }

  /** The factor the ceiling grows by per retry. */
  public double multiplier() {
    return multiplier;
  }

  /** The longest wait, whatever the attempt. */
  public Duration cap() {
    return cap;
  }

  /** How a wait is drawn from its ceiling. */
  public Jitter jitter() {
    return jitter;
  }

  /**
   * The longest wait before retry {@code attempt}, before jitter: {@code min(cap, initial ×
   * multiplier^attempt)}. Never overflows: a large attempt gives the cap.
   *
   * @param attempt 0 for the first retry
   * @throws IllegalArgumentException if {@code attempt} is negative
   */
  public Duration ceiling(int attempt) {
    return Duration.ofNanos(ceilingNanos(attempt));
  }

  /**
   * The wait before retry {@code attempt}: its {@link #ceiling(int) ceiling} with the jitter
   * applied; between zero and {@link #cap()}.
   *
   * @param attempt 0 for the first retry
   * @throws IllegalArgumentException if {@code attempt} is negative
   */
  public Duration delay(int attempt) {
    long ceiling = ceilingNanos(attempt);
    return Duration.ofNanos(
        switch (jitter) {
          case NONE -> ceiling;
          case FULL -> fraction(ceiling);
          case EQUAL -> ceiling / 2 + fraction(ceiling - ceiling / 2);
        });
  }

  /**
   * The longest a caller can wait in all over {@code retries} retries: the sum of their ceilings
   * (whatever the jitter, the waits cannot add up to more).
   *
   * @throws IllegalArgumentException if {@code retries} is negative
   */
  public Duration maxTotal(int retries) {
    if (retries < 0) {
      throw new IllegalArgumentException("retries must be >= 0, but was " + retries);
    }
    Duration total = Duration.ZERO;
    for (int attempt = 0; attempt < retries; attempt++) {
      total = total.plusNanos(ceilingNanos(attempt));
    }
    return total;
  }

  private static double threadLocalRandom() {
    return ThreadLocalRandom.current().nextDouble();
  }

  private long ceilingNanos(int attempt) {
    if (attempt < 0) {
      throw new IllegalArgumentException("attempt must be >= 0, but was " + attempt);
    }
    if (initialNanos == 0) {
      return 0; // also spares 0 × infinity below
    }
    // In double: an overflow is +infinity, which the cap bounds; powers of 2 stay exact.
    double grown = initialNanos * Math.pow(multiplier, attempt);
    return grown >= capNanos ? capNanos : (long) grown;
  }

  /** A uniform draw in [0, range) from the injected randomness, clamped into that range. */
  private long fraction(long range) {
    double r = random.getAsDouble();
    if (!(r > 0)) {
      return 0; // negative, zero or NaN
    }
    long drawn = (long) (Math.min(r, 1) * range);
    return Math.min(drawn, Math.max(0, range - 1));
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Backoff b
        && initial.equals(b.initial)
        && Double.compare(multiplier, b.multiplier) == 0
        && cap.equals(b.cap)
        && jitter == b.jitter;
  }

  @Override
  public int hashCode() {
    return Objects.hash(initial, multiplier, cap, jitter);
  }

  @Override
  public String toString() {
    return "Backoff{initial="
        + initial
        + ", multiplier="
        + multiplier
        + ", cap="
        + cap
        + ", jitter="
        + jitter
        + "}";
  }
}
