package dev.pubsubworker.runtime.worker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pubsubworker.backend.memory.InMemoryLockBackend;
import dev.pubsubworker.core.GuardListener;
import dev.pubsubworker.core.IdempotencyGuard;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/** One guard per subscription on one store, each observed by its own subscription's listeners. */
class SubscriptionGuardsTest {

  private final Queue<String> events = new ConcurrentLinkedQueue<>();

  private GuardListener recorder(String subscription) {
    return new GuardListener() {
      @Override
      public void claimed(String key, long fence, boolean reclaim) {
        events.add(subscription + " claimed " + key);
      }

      @Override
      public void completed(String key, long fence, java.time.Duration workTime) {
        events.add(subscription + " completed " + key);
      }
    };
  }

  @Test
  void each_subscription_gets_its_own_guard_on_the_shared_store_with_its_own_listeners()
      throws Exception {
    InMemoryLockBackend backend = new InMemoryLockBackend();
    try (SubscriptionGuards guards =
        SubscriptionGuards.create(
            List.of("orders", "refunds"),
            backend,
            id -> List.of(recorder(id)),
            UnaryOperator.identity())) {
      IdempotencyGuard orders = guards.bySubscription().get("orders");
      IdempotencyGuard refunds = guards.bySubscription().get("refunds");
      assertThat(orders).isNotSameAs(refunds);
      assertThat(orders.backend()).isSameAs(backend).isSameAs(refunds.backend());

      orders.lock("orders:1", ctx -> "ok");
      refunds.lock("refunds:1", ctx -> "ok");
      // The store is shared: a key DONE through one guard is a duplicate through the other.
      assertThat(refunds.lock("orders:1", ctx -> "again").executed()).isFalse();

      assertThat(events)
          .containsExactly(
              "orders claimed orders:1",
              "orders completed orders:1",
              "refunds claimed refunds:1",
              "refunds completed refunds:1");
    }
  }
}
