package dev.pubsubworker.app.demo;

import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.runtime.pubsub.DispatchListener;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/** Counts the demo's deliveries by outcome, for the progress line and the summary. */
final class DemoStats implements DispatchListener {

  final AtomicInteger delivered = new AtomicInteger();
  final AtomicInteger processed = new AtomicInteger();
  final AtomicInteger duplicates = new AtomicInteger();
  final AtomicInteger heldElsewhere = new AtomicInteger();
  final AtomicInteger parked = new AtomicInteger();
  final AtomicInteger parkedThenProcessed = new AtomicInteger();
  final AtomicInteger parkedThenDuplicate = new AtomicInteger();
  final AtomicInteger parkedTimeouts = new AtomicInteger();
  final AtomicInteger failed = new AtomicInteger();
  final AtomicInteger deadLettered = new AtomicInteger();
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
      case PARKED_THEN_PROCESSED -> {
        processed.incrementAndGet();
        parkedThenProcessed.incrementAndGet();
      }
      case DUPLICATE -> duplicates.incrementAndGet();
      case PARKED_THEN_DUPLICATE -> {
        duplicates.incrementAndGet();
        parkedThenDuplicate.incrementAndGet();
      }
      case PARKED_TIMEOUT -> parkedTimeouts.incrementAndGet();
      case IN_PROGRESS -> heldElsewhere.incrementAndGet();
      case FAILED -> failed.incrementAndGet();
      case DEAD_LETTERED -> deadLettered.incrementAndGet();
      default -> {
        // Only a nack comes back as a redelivery; the other acked outcomes (fenced out, complete
        // failed) are alerts of their own, not retries.
        if (!outcome.acked()) {
          other.incrementAndGet();
        }
      }
    }
  }

  @Override
  public void parkedSettled(String subscription, Outcome outcome, Duration waited) {
    parked.incrementAndGet();
  }

  @Override
  public void inFlight(String subscription, int delta) {
    inFlight.addAndGet(delta);
  }

  /**
   * Deliveries nacked because something failed (a placement, the lock store, ...): they come back
   * as redeliveries. Waiting for a held key is not a failure: parked deliveries are counted apart
   * ({@link #parked}), and so are their timeouts.
   */
  int retried() {
    return heldElsewhere.get() + failed.get() + other.get();
  }
}
