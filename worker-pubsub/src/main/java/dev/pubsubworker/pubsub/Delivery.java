package dev.pubsubworker.pubsub;

import dev.pubsubworker.api.InboundMessage;
import dev.pubsubworker.core.WorkContext;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * One delivery of a message, from receipt to its one ack or nack, across its runs (a parked
 * delivery runs again when its retry comes) and its waits. Exactly one of the receiver and the stop
 * settles it: {@link #settle} and {@link #abandon} race for the right, and only the winner replies.
 * Where it waits is not its business: {@link KeyLines} keeps that. Thread-safe.
 */
final class Delivery {

  /** Acks or nacks the delivery through the client's consumer. */
  interface Reply {
    void ack();

    void nack();
  }

  private final InboundMessage message;
  private final Reply reply;
  private final DeliveryObserver observer;
  private final AtomicBoolean settled = new AtomicBoolean();

  /** Its lock key, once resolved and valid (what its claims and log lines use). */
  private volatile @Nullable String lockKey;

  /** The thread of its run in progress (or of its last run), for an abandonment's interrupt. */
  private volatile @Nullable Thread thread;

  /** When its run in progress began, on the receiver's clock; null between runs. */
  private volatile @Nullable Instant runningSince;

  /** The guard's context of its run in progress, once the claim is won: what a stop abandons. */
  private volatile @Nullable WorkContext context;

  Delivery(InboundMessage message, Reply reply, DeliveryObserver observer) {
    this.message = message;
    this.reply = reply;
    this.observer = observer;
  }

  InboundMessage message() {
    return message;
  }

  /** Follows it for tracing; {@link DeliveryObserver#NONE} when nothing does. */
  DeliveryObserver observer() {
    return observer;
  }

  @Nullable String lockKey() {
    return lockKey;
  }

  /** Remembers its resolved and valid lock key, so that later runs need not resolve it again. */
  void lockKey(String key) {
    this.lockKey = key;
  }

  /**
   * Acks it if {@code outcome} acks, else nacks it, unless it is settled already (by an earlier
   * call, or abandoned by a stop).
   *
   * @return true if this call settled it
   */
  boolean settle(Outcome outcome) {
    if (!settled.compareAndSet(false, true)) {
      return false;
    }
    if (outcome.acked()) {
      reply.ack();
    } else {
      reply.nack();
    }
    return true;
  }

  /**
   * Takes the right to settle it away from its run, for a stop that abandons it: from now on the
   * run neither acks it nor starts its handler. The stop nacks it with {@link #nackAbandoned()}.
   *
   * @return true if this call took it (it was not settled yet)
   */
  boolean abandon() {
    return settled.compareAndSet(false, true);
  }

  /** Nacks it after {@link #abandon()} succeeded. */
  void nackAbandoned() {
    reply.nack();
  }

  /** Whether it is settled, or abandoned by a stop. */
  boolean isSettled() {
    return settled.get();
  }

  /** A run begins on {@code runner} at {@code now}; the context of any earlier run is gone. */
  void runStarted(Thread runner, Instant now) {
    this.context = null;
    this.thread = runner;
    this.runningSince = now;
  }

  /**
   * Its run's thread moved on while the run goes on without it (its complete on its way): a stop
   * that abandons the run has no thread to interrupt.
   */
  void handedOff() {
    this.thread = null;
  }

  /** Its run ended (settled, or parked until the next one). */
  void runEnded() {
    this.runningSince = null;
  }

  /** The run's claim was won: {@code claimed} is what a stop would abandon. */
  void claimed(WorkContext claimed) {
    this.context = claimed;
  }

  @Nullable Thread thread() {
    return thread;
  }

  @Nullable Instant runningSince() {
    return runningSince;
  }

  @Nullable WorkContext context() {
    return context;
  }

  @Override
  public String toString() {
    return "Delivery[" + message.messageId() + "]";
  }
}
