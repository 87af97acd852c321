package dev.pubsubworker.testkit;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A clock that runs like its base clock plus an offset the test can only increase: real time keeps
 * passing (so real stores and timeouts behave), and {@link #advance} jumps leases and windows
 * forward without sleeping. A {@link BackendFixture} for a backend that judges time on an injected
 * {@link Clock} typically hands it one of these. Thread-safe.
 */
public final class OffsetClock extends Clock {

  private final Clock base;
  private final AtomicLong offsetMillis;

  /** An offset clock over the system UTC clock, starting at offset zero. */
  public OffsetClock() {
    this(Clock.systemUTC(), new AtomicLong());
  }

  private OffsetClock(Clock base, AtomicLong offsetMillis) {
    this.base = Objects.requireNonNull(base, "base");
    this.offsetMillis = offsetMillis;
  }

  /**
   * Moves this clock (and every clock derived from it with {@link #withZone}) forward.
   *
   * @throws IllegalArgumentException if amount is negative
   */
  public void advance(Duration amount) {
    if (amount.isNegative()) {
      throw new IllegalArgumentException("time only moves forward, but amount was " + amount);
    }
    offsetMillis.addAndGet(amount.toMillis());
  }

  /** The total offset added so far. */
  public Duration offset() {
    return Duration.ofMillis(offsetMillis.get());
  }

  @Override
  public ZoneId getZone() {
    return base.getZone();
  }

  @Override
  public Clock withZone(ZoneId zone) {
    return new OffsetClock(base.withZone(zone), offsetMillis);
  }

  @Override
  public Instant instant() {
    return base.instant().plusMillis(offsetMillis.get());
  }

  @Override
  public long millis() {
    return base.millis() + offsetMillis.get();
  }
}
