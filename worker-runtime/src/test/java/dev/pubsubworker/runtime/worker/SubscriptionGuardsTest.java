package dev.pubsubworker.runtime.worker;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import dev.pubsubworker.backend.memory.InMemoryLockBackend;
import dev.pubsubworker.core.GuardListener;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.LockRecord;
import dev.pubsubworker.core.WorkContext;
import dev.pubsubworker.runtime.config.WorkerConfig;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * One guard per subscription on one store, each built once from its own subscription's guard
 * settings and observed by its own subscription's listeners.
 */
class SubscriptionGuardsTest {

  private static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");

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

  private static WorkerConfig config(String orders, String refunds) {
    return WorkerConfig.load(
        ConfigFactory.parseString(
                """
                pubsub-worker {
                  project-id = "demo-project"
                  subscriptions {
                    orders { handler = "orders", %s }
                    refunds { handler = "refunds", %s }
                  }
                }
                """
                    .formatted(orders, refunds))
            .withFallback(ConfigFactory.defaultReference())
            .resolve());
  }

  /** The lease a claim was granted, on the guard's clock, to the second. */
  private static Duration lease(WorkContext ctx) {
    return Duration.ofSeconds(
        Math.round(Duration.between(ctx.claimedAt(), ctx.leaseExpiry()).toMillis() / 1000.0));
  }

  @Test
  void each_subscription_gets_its_own_guard_on_the_shared_store_with_its_own_listeners()
      throws Exception {
    InMemoryLockBackend backend = new InMemoryLockBackend();
    try (SubscriptionGuards guards =
        SubscriptionGuards.create(
            config("", "").orderedSubscriptions(),
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

  @Test
  void each_guard_claims_with_its_own_subscriptions_lease_and_ttl_with_no_per_call_options()
      throws Exception {
    Clock clock = Clock.fixed(NOW, ZoneOffset.UTC);
    InMemoryLockBackend backend = new InMemoryLockBackend(clock);
    WorkerConfig config =
        config("lease = 5s, ttl = 1h, heartbeat = false", "lease = 40s, ttl = 2h");
    try (SubscriptionGuards guards =
        SubscriptionGuards.create(
            config.orderedSubscriptions(), backend, id -> List.of(), UnaryOperator.identity())) {
      AtomicReference<WorkContext> seen = new AtomicReference<>();
      guards.bySubscription().get("orders").lock("orders:1", ctx -> seen.getAndSet(ctx));
      assertThat(lease(seen.get())).isEqualTo(Duration.ofSeconds(5));
      guards.bySubscription().get("refunds").lock("refunds:1", ctx -> seen.getAndSet(ctx));
      assertThat(lease(seen.get())).isEqualTo(Duration.ofSeconds(40));

      // The DONE record suppresses duplicates for the subscription's own ttl.
      LockRecord orders = backend.inspect("orders:1").orElseThrow();
      LockRecord refunds = backend.inspect("refunds:1").orElseThrow();
      assertThat(Duration.between(NOW, orders.expiresAt())).isEqualTo(Duration.ofHours(1));
      assertThat(Duration.between(NOW, refunds.expiresAt())).isEqualTo(Duration.ofHours(2));
    }
  }
}
