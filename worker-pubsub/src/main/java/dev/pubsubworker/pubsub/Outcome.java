package dev.pubsubworker.pubsub;

/**
 * How a {@link GuardedReceiver} settled one delivery, and whether it acked or nacked it. The table
 * in {@link GuardedReceiver}'s documentation says which outcome each case gets.
 */
public enum Outcome {
  /** The handler ran and DONE was recorded (or the mutex released): acked. */
  PROCESSED(true),
  /** The key was DONE: the handler was skipped and the message acked. */
  DUPLICATE(true),
  /**
   * Another live claim holds the key and the delivery was not parked ({@link
   * GuardedReceiver.Builder#inProgressMaxWait} zero), or a mutex found the key DONE: nacked,
   * retried later.
   */
  IN_PROGRESS(false),
  /**
   * The delivery waited (parked while another claim held its key, or queued locally behind a
   * delivery of the same key), then won the claim and the handler ran: acked.
   */
  PARKED_THEN_PROCESSED(true),
  /** The delivery waited, then found the key DONE: the handler was skipped and it was acked. */
  PARKED_THEN_DUPLICATE(true),
  /** The delivery waited its whole in-progress-max-wait and the key was still held: nacked. */
  PARKED_TIMEOUT(false),
  /**
   * The handler threw: nacked. Also a terminal failure of a receiver without a dead-letter
   * publisher.
   */
  FAILED(false),
  /**
   * No (valid) key could be resolved, unguarded runs are not allowed, and there is no dead-letter
   * publisher: nacked (fail closed). With one, such a message is {@link #DEAD_LETTERED}.
   */
  UNKEYED(false),
  /**
   * The handler ran without a guard ({@link GuardMode#NONE}, or an unkeyed message allowed to):
   * acked.
   */
  UNGUARDED(true),
  /** The handler ran, but its claim was taken over before DONE was written: acked, alert. */
  FENCED_OUT(true),
  /**
   * The handler ran in the lock store's transaction, but its claim was taken over before the
   * commit: the transaction was rolled back and the new holder runs the work. Acked, no alert:
   * nothing ran twice.
   */
  FENCED_OUT_ROLLED_BACK(true),
  /** The handler ran, but writing DONE failed in the lock store: acked, alert. */
  COMPLETE_FAILED(true),
  /** The payload's fingerprint differs from the key's and the policy rejects it: nacked. */
  FINGERPRINT_REJECTED(false),
  /** The lock store failed before the handler ran: nacked. */
  STORE_FAILED(false),
  /** Still running when the stop's grace ran out: its claim released, nacked. */
  ABANDONED(false),
  /**
   * Reached the receiver after its stop began, or was parked or queued locally when it began:
   * nacked, nothing ran.
   */
  REFUSED_AT_SHUTDOWN(false),
  /**
   * A terminal failure (a terminal exception, or a missing or invalid key while fail-closed) was
   * published to the dead-letter topic: acked after that publish succeeded, claim released.
   */
  DEAD_LETTERED(true),
  /** A terminal failure whose publish to the dead-letter topic failed or timed out: nacked. */
  DEAD_LETTER_FAILED(false);

  private final boolean acked;

  Outcome(boolean acked) {
    this.acked = acked;
  }

  /** Whether this outcome acks the message (else it nacks it). */
  public boolean acked() {
    return acked;
  }

  /** This outcome for a delivery that waited first (parked or queued locally). */
  Outcome afterWaiting() {
    return switch (this) {
      case PROCESSED -> PARKED_THEN_PROCESSED;
      case DUPLICATE -> PARKED_THEN_DUPLICATE;
      default -> this;
    };
  }
}
