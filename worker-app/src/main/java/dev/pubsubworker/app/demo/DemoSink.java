package dev.pubsubworker.app.demo;

import dev.pubsubworker.plugins.orders.Order;
import dev.pubsubworker.plugins.orders.OrderLedger;
import dev.pubsubworker.plugins.orders.OrderSink;
import java.io.IOException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The demo's supplier: the example's ledger, with injected failures — the first attempt to place
 * each order in {@code failFirst} throws, as a supplier timing out would, so the message is nacked
 * and redelivered.
 */
final class DemoSink implements OrderSink {

  final OrderLedger ledger = new OrderLedger();
  final AtomicInteger injectedFailures = new AtomicInteger();
  private final Set<String> failFirst;
  private final Set<String> failed = ConcurrentHashMap.newKeySet();

  DemoSink(Set<String> failFirst) {
    this.failFirst = Set.copyOf(failFirst);
  }

  @Override
  public void place(String idempotencyKey, long fencingToken, Order order) throws IOException {
    if (failFirst.contains(order.orderId()) && failed.add(order.orderId())) {
      injectedFailures.incrementAndGet();
      throw new IOException("supplier unavailable (injected failure)");
    }
    ledger.place(idempotencyKey, fencingToken, order);
  }
}
