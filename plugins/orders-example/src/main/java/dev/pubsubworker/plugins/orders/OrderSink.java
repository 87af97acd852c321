package dev.pubsubworker.plugins.orders;

/**
 * Where an order goes: in production a supplier's API. Implementations should pass {@code
 * idempotencyKey} on (an {@code Idempotency-Key} header, a deterministic file name) so that a
 * re-send after a crash in the window between the send and the DONE record is a no-op at the
 * supplier, and may refuse {@code fencingToken}s lower than the highest seen for the key.
 */
public interface OrderSink {

  /**
   * Places the order.
   *
   * @param idempotencyKey the lock key this order runs under
   * @param fencingToken the claim's fencing token
   * @param order the order
   * @throws Exception if the supplier refused or could not be reached (the message is retried)
   */
  void place(String idempotencyKey, long fencingToken, Order order) throws Exception;
}
