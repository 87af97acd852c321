package dev.pubsubworker.app.demo;

import dev.pubsubworker.runtime.pubsub.DispatchListener;
import dev.pubsubworker.runtime.pubsub.Outcome;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/** Counts the demo's deliveries by outcome, for the progress line and the summary. */
final class DemoStats implements DispatchListener {

  final AtomicInteger delivered = new AtomicInteger();
  final AtomicInteger processed = new AtomicInteger();
  final AtomicInteger duplicates = new AtomicInteger();
  final AtomicInteger heldElsewhere = new AtomicInteger();
  final AtomicInteger failed = new AtomicInteger();
  final AtomicInteger other = new AtomicInteger();
  final AtomicInteger inFlight = new AtomicInteger();

  @Override
  public void received(String subscription) {
    delivered.incrementAndGet();
  }

  @Override
  public void settled(String subscription, Outcome outcome, Duration handlerTime) {
    switch (outcome) {
      case PROCESSED, UNGUARDED -> processed.incrementAndGet();
      case DUPLICATE -> duplicates.incrementAndGet();
      case IN_PROGRESS -> heldElsewhere.incrementAndGet();
      case FAILED -> failed.incrementAndGet();
      default -> other.incrementAndGet();
    }
  }

  @Override
  public void inFlight(String subscription, int delta) {
    inFlight.addAndGet(delta);
  }

  /** Nacked deliveries: they come back as redeliveries. */
  int retried() {
    return heldElsewhere.get() + failed.get() + other.get();
  }
}
