package dev.pubsubworker.runtime.observability;

import dev.pubsubworker.core.GuardListener;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

/**
 * When the lock store last answered: any guard call that returned (as a {@link GuardListener}) or a
 * readiness probe that did. A call that threw does not count as an answer; its message is kept to
 * explain a stale store. Thread-safe; never throws.
 */
final class LockStoreFreshness implements GuardListener {

  private final Clock clock;
  private final AtomicReference<Instant> lastAnswer = new AtomicReference<>();
  private volatile String lastError;

  LockStoreFreshness(Clock clock) {
    this.clock = clock;
  }

  @Override
  public void backendCall(Verb verb, Duration latency, boolean succeeded) {
    if (succeeded) {
      answered();
    } else {
      failed((verb == null ? "a call" : MetricNames.tagValue(verb)) + " failed");
    }
  }

  /** The store answered now. */
  void answered() {
    Instant now = clock.instant();
    lastAnswer.accumulateAndGet(now, (a, b) -> a == null || b.isAfter(a) ? b : a);
  }

  /** A call failed, for the reason given. */
  void failed(String why) {
    lastError = why;
  }

  Optional<Instant> lastAnswer() {
    return Optional.ofNullable(lastAnswer.get());
  }

  Optional<String> lastError() {
    return Optional.ofNullable(lastError);
  }
}
