package dev.pubsubworker.pubsub;

import com.google.cloud.pubsub.v1.AckResponse;
import com.google.pubsub.v1.PubsubMessage;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.DoubleSupplier;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * A {@link GuardedReceiver}'s path of one message, as glue over the parts that each do one job: the
 * key ({@link DeliveryKeys}), where it waits ({@link KeyLines}), its run ({@link GuardedRun}), what
 * runs now ({@link Running}) and its failures ({@link Failures}). A delivery arrives, joins its
 * key's line (or waits in it), runs once, and is settled — or parked until its retry runs it once
 * more. Thread-safe.
 */
final class Dispatcher {

  /**
   * What parking needs.
   *
   * @param maxWait how long a delivery may wait in all; positive
   * @param timer schedules retries and deadlines
   * @param handlers runs retries and the next delivery of a line
   * @param random the backoff's jitter, in [0, 1)
   * @param keyLogFormat how keys appear in log lines
   */
  record Parking(
      Duration maxWait,
      ScheduledExecutorService timer,
      Executor handlers,
      DoubleSupplier random,
      UnaryOperator<String> keyLogFormat) {}

  private final String subscription;
  private final ReceiverListener listener;
  private final Clock clock;
  private final @Nullable DeliveryKeys keys;
  private final @Nullable KeyLines lines;
  private final GuardedRun run;
  private final Failures failures;
  private final Running running;

  /**
   * @param keys the deliveries' keys; null when unguarded (then nothing waits)
   * @param parking null for no parking: a held key is nacked at once
   */
  Dispatcher(
      String subscription,
      ReceiverListener listener,
      Clock clock,
      @Nullable DeliveryKeys keys,
      GuardedRun run,
      Failures failures,
      Running running,
      @Nullable Parking parking) {
    this.subscription = subscription;
    this.listener = listener;
    this.clock = clock;
    this.keys = keys;
    this.run = run;
    this.failures = failures;
    this.running = running;
    this.lines =
        keys == null || parking == null
            ? null
            : new KeyLines(
                subscription,
                parking.maxWait(),
                parking.timer(),
                parking.handlers(),
                clock,
                parking.random(),
                parking.keyLogFormat(),
                listener,
                new KeyLines.Turns() {
                  @Override
                  public void run(Delivery d) {
                    runOnce(d);
                  }

                  @Override
                  public boolean settle(Delivery d, Outcome outcome) {
                    return Dispatcher.this.settle(d, outcome, Duration.ZERO);
                  }
                });
  }

  /**
   * Handles one delivery on the calling (handler) thread: runs it and settles it, or parks it or
   * queues it behind its key's line and returns without settling (a timer or the line's head
   * settles it later).
   */
  void dispatch(PubsubMessage pubsub, Delivery.Reply reply) {
    listener.received(subscription);
    Delivery d =
        new Delivery(
            InboundMessages.of(pubsub), reply, listener.deliveryStarted(subscription, pubsub));
    KeyLines l = lines;
    DeliveryKeys k = keys;
    if (l != null && k != null) {
      String line = k.lineOf(d);
      if (line != null && !l.join(d, line)) {
        return; // queued behind its key's head; handed to a handler thread when its turn comes
      }
    }
    runOnce(d);
  }

  /** An exactly-once ack of message {@code messageId} came back with {@code response}. */
  void ackResponse(String messageId, AckResponse response) {
    listener.ackResponse(subscription, response);
    failures.ackResponse(messageId, response);
  }

  /** The lines, when deliveries can wait; else null. */
  @Nullable KeyLines lines() {
    return lines;
  }

  /** The runs in progress. */
  Running running() {
    return running;
  }

  /**
   * Runs {@code d} once on the calling thread; then settles it, parks it until its retry, or — when
   * its complete is still on its way ({@link GuardedRun.Result#completing}) — leaves it running,
   * without this thread, until the store's answer settles it on the thread that brings it.
   */
  private void runOnce(Delivery d) {
    if (!running.add(d, clock.instant())) {
      // Counted by Running and reported by the stop, not one line per delivery.
      settle(d, Outcome.REFUSED_AT_SHUTDOWN, Duration.ZERO);
      return;
    }
    listener.inFlight(subscription, 1);
    DeliveryMdc.open(subscription, d.message());
    long started = System.nanoTime();
    Outcome outcome = Outcome.FAILED;
    boolean parked = false;
    CompletionStage<Outcome> completing = null;
    DeliveryObserver.Scope traced = d.observer().activate();
    try {
      KeyLines l = lines;
      GuardedRun.Result result = run.run(d, l != null && l.inLine(d));
      outcome = result.outcome();
      completing = result.completing();
      if (result.held() && l != null) {
        Outcome refused = l.park(d, result.heldUntil());
        parked = refused == null;
        if (refused != null) {
          outcome = refused;
        }
      }
    } catch (Error e) {
      outcome = Outcome.FAILED;
      completing = null;
      throw e;
    } finally {
      if (completing != null) {
        // No interrupt of a stop may reach this thread for it any more: it runs other deliveries.
        d.handedOff();
      } else if (!parked) {
        // Once only: a delivery abandoned at the stop was nacked already, and just leaves its line.
        settle(d, outcome, Duration.ofNanos(System.nanoTime() - started));
      }
      traced.close();
      if (completing == null) {
        running.remove(d);
        listener.inFlight(subscription, -1);
      }
      DeliveryMdc.close();
    }
    if (completing == null) {
      return;
    }
    Thread runner = Thread.currentThread();
    Outcome ifFailed = outcome;
    completing.whenComplete(
        (answered, failure) -> {
          boolean elsewhere = Thread.currentThread() != runner;
          DeliveryObserver.Scope again = elsewhere ? d.observer().activate() : null;
          if (elsewhere) {
            DeliveryMdc.open(subscription, d.message());
          }
          try {
            settle(
                d,
                failure == null && answered != null ? answered : ifFailed,
                Duration.ofNanos(System.nanoTime() - started));
          } finally {
            running.remove(d);
            listener.inFlight(subscription, -1);
            if (again != null) {
              again.close();
              DeliveryMdc.close();
            }
          }
        });
  }

  /**
   * Acks or nacks {@code d} (once: a stop may have nacked it already), reports it, and hands its
   * line to the next delivery of its key.
   *
   * @return true if this call settled it
   */
  private boolean settle(Delivery d, Outcome outcome, Duration took) {
    KeyLines l = lines;
    Optional<Duration> waited = l == null ? Optional.empty() : l.waited(d);
    Outcome reported = waited.isPresent() ? outcome.afterWaiting() : outcome;
    if (!d.isSettled()) {
      d.observer().settling(reported);
    }
    boolean settled = d.settle(reported);
    if (settled) {
      listener.settled(subscription, reported, took);
      if (waited.isPresent()) {
        listener.parkedSettled(subscription, reported, waited.get());
      }
      d.observer().settled(reported);
    } else {
      d.observer().settled(Outcome.ABANDONED);
    }
    if (l != null) {
      l.leave(d);
    }
    return settled;
  }
}
