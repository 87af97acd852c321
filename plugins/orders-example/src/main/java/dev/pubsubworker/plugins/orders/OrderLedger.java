package dev.pubsubworker.plugins.orders;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The example's stand-in for a supplier: counts how often each order was placed, so a demo or test
 * can check that every order was placed exactly once. Thread-safe.
 */
public final class OrderLedger implements OrderSink {

  private final Map<String, AtomicInteger> placements = new ConcurrentHashMap<>();

  @Override
  public void place(String idempotencyKey, long fencingToken, Order order) {
    placements.computeIfAbsent(order.orderId(), id -> new AtomicInteger()).incrementAndGet();
  }

  /** How often {@code orderId} was placed. */
  public int placements(String orderId) {
    AtomicInteger n = placements.get(orderId);
    return n == null ? 0 : n.get();
  }

  /** How many distinct orders were placed at least once. */
  public int distinctOrders() {
    return placements.size();
  }

  /** How many placements there were in all. */
  public int totalPlacements() {
    return placements.values().stream().mapToInt(AtomicInteger::get).sum();
  }
}
