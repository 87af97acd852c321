package dev.pubsubworker.core;

/**
 * How a {@link IdempotencyGuard#lock} call ended after its work returned normally. Whatever the
 * value, the delivery is to be acknowledged: replaying work whose side effect already happened is
 * worse than any of these (the error policy of {@link IdempotencyGuard}; docs/design.md, "Error
 * policy").
 */
public enum Completion {
  /** DONE was recorded under the work's fence: redeliveries are duplicates for the ttl. */
  COMPLETED,
  /**
   * The work ran, but its lease lapsed and another claim took the key before DONE could be written:
   * the other holder may run the work again. Logged at ERROR for alerting; a longer lease or a
   * working heartbeat prevents it.
   */
  FENCED_OUT,
  /**
   * The work ran, but writing DONE failed in the store, so whether it is recorded is unknown.
   * Logged at ERROR; a redelivery may run the work again once the lease lapses.
   */
  COMPLETE_FAILED,
  /**
   * Transactional mode only: the claim was fenced out at commit time, so the work's transaction was
   * rolled back with it. Nothing of the work stands; the claim that took over runs it.
   */
  FENCED_OUT_ROLLED_BACK
}
