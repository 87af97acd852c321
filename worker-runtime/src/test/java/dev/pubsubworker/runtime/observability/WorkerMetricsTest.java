package dev.pubsubworker.runtime.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.cloud.pubsub.v1.AckResponse;
import dev.pubsubworker.backend.memory.InMemoryLockBackend;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.GuardListener;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.testkit.ManualTime;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

/** {@link WorkerMetrics} on its own: names, zeros, attribution of guard events, never throwing. */
class WorkerMetricsTest {

  private final MeterRegistry registry = new SimpleMeterRegistry();
  private final WorkerMetrics metrics = new WorkerMetrics(List.of("orders", "refunds"));

  @AfterEach
  void clearMdc() {
    MDC.clear();
  }

  @Test
  void every_configured_subscription_is_registered_at_zero_when_bound() {
    metrics.bindTo(registry);
    for (String sub : List.of("orders", "refunds")) {
      assertThat(count(MetricNames.MESSAGES_RECEIVED, "subscription", sub)).isZero();
      for (Outcome o : Outcome.values()) {
        assertThat(
                count(
                    MetricNames.MESSAGES_SETTLED,
                    "subscription",
                    sub,
                    "outcome",
                    MetricNames.tagValue(o)))
            .isZero();
      }
      for (AckResponse r : AckResponse.values()) {
        assertThat(
                count(
                    MetricNames.ACK_RESPONSES,
                    "subscription",
                    sub,
                    "response",
                    MetricNames.tagValue(r)))
            .isZero();
      }
      assertThat(registry.get(MetricNames.MESSAGES_IN_FLIGHT).tag("subscription", sub).gauge())
          .isNotNull();
      assertThat(count(MetricNames.LEASE_EXTENSIONS, "subscription", sub)).isZero();
      assertThat(count(MetricNames.LEASES_LOST, "subscription", sub, "cause", "fence-stale"))
          .isZero();
      assertThat(count(MetricNames.LEASES_LOST, "subscription", sub, "cause", "store-unreachable"))
          .isZero();
    }
  }

  @Test
  void dispatch_events_are_counted_timed_and_gauged() {
    metrics.bindTo(registry);
    metrics.received("orders");
    metrics.inFlight("orders", 1);
    assertThat(registry.get(MetricNames.MESSAGES_IN_FLIGHT).tag("subscription", "orders").gauge())
        .extracting(g -> g.value())
        .isEqualTo(1.0);
    metrics.settled("orders", Outcome.FENCED_OUT, Duration.ofMillis(30));
    metrics.inFlight("orders", -1);
    metrics.settled("orders", Outcome.ABANDONED, Duration.ZERO);
    metrics.ackResponse("orders", AckResponse.PERMISSION_DENIED);

    assertThat(count(MetricNames.MESSAGES_RECEIVED, "subscription", "orders")).isEqualTo(1);
    assertThat(
            count(MetricNames.MESSAGES_SETTLED, "subscription", "orders", "outcome", "fenced-out"))
        .isEqualTo(1);
    assertThat(
            count(MetricNames.MESSAGES_SETTLED, "subscription", "orders", "outcome", "abandoned"))
        .isEqualTo(1);
    Timer handler =
        registry
            .get(MetricNames.HANDLER_DURATION)
            .tags("subscription", "orders", "outcome", "fenced-out")
            .timer();
    assertThat(handler.count()).isEqualTo(1);
    // An abandoned delivery has no handler time: no timer sample.
    assertThat(
            registry
                .find(MetricNames.HANDLER_DURATION)
                .tags("subscription", "orders", "outcome", "abandoned")
                .timer())
        .isNull();
    assertThat(
            registry
                .get(MetricNames.MESSAGES_IN_FLIGHT)
                .tag("subscription", "orders")
                .gauge()
                .value())
        .isZero();
    assertThat(
            count(
                MetricNames.ACK_RESPONSES,
                "subscription",
                "orders",
                "response",
                "permission-denied"))
        .isEqualTo(1);
  }

  @Test
  void guard_events_are_recorded_under_the_subscription_their_listener_is_bound_to() {
    metrics.bindTo(registry);
    GuardListener refunds = metrics.guardListener("refunds");
    refunds.claimed("k", 1, false);
    refunds.claimed("k2", 4, true);
    refunds.fencedOut("k", 1);
    refunds.completeFailed("k2", 4, new IllegalStateException("store down"));
    refunds.fingerprintMismatch("k3");

    assertThat(count(MetricNames.GUARD_CLAIMS, "subscription", "refunds", "kind", "first"))
        .isEqualTo(1);
    assertThat(count(MetricNames.GUARD_CLAIMS, "subscription", "refunds", "kind", "reclaim"))
        .isEqualTo(1);
    assertThat(count(MetricNames.FENCED_OUT, "subscription", "refunds")).isEqualTo(1);
    assertThat(count(MetricNames.COMPLETE_FAILED, "subscription", "refunds")).isEqualTo(1);
    assertThat(count(MetricNames.FINGERPRINT_MISMATCHES, "subscription", "refunds")).isEqualTo(1);
    assertThat(count(MetricNames.GUARD_CLAIMS, "subscription", "orders", "kind", "first")).isZero();
  }

  @Test
  void heartbeat_events_on_another_thread_keep_their_listener_subscription_whatever_the_mdc()
      throws Exception {
    metrics.bindTo(registry);
    GuardListener orders = metrics.guardListener("orders");
    orders.claimed("k", 7, true);
    // The heartbeat runs on another thread; a stale MDC there must not move the events.
    CompletableFuture.runAsync(
            () -> {
              MDC.put(MdcKeys.SUBSCRIPTION, "refunds");
              try {
                orders.leaseExtended("k", 7);
                orders.leaseLost("k", 7, GuardListener.LeaseLoss.STORE_UNREACHABLE);
                orders.leaseExtended("other", 1);
              } finally {
                MDC.clear();
              }
            })
        .get();
    assertThat(count(MetricNames.LEASE_EXTENSIONS, "subscription", "orders")).isEqualTo(2);
    assertThat(
            count(MetricNames.LEASES_LOST, "subscription", "orders", "cause", "store-unreachable"))
        .isEqualTo(1);
    assertThat(count(MetricNames.LEASE_EXTENSIONS, "subscription", "refunds")).isZero();
    assertThat(registry.find(MetricNames.LEASE_EXTENSIONS).counters())
        .extracting(c -> c.getId().getTag("subscription"))
        .containsExactlyInAnyOrder("orders", "refunds");
  }

  @Test
  void a_lease_that_ran_out_on_the_guards_clock_is_counted_as_expired() throws Exception {
    metrics.bindTo(registry);
    assertThat(count(MetricNames.LEASES_LOST, "subscription", "orders", "cause", "expired"))
        .as("registered at zero")
        .isZero();
    ManualTime time = new ManualTime();
    InMemoryLockBackend store = new InMemoryLockBackend(time.clock());
    LockBackend slowClaims =
        new LockBackend() {
          @Override
          public ClaimResult claim(ClaimRequest request) {
            ClaimResult result = store.claim(request);
            time.advance(Duration.ofSeconds(6)); // the answer takes longer than the 5 s lease
            return result;
          }

          @Override
          public boolean complete(Claim claim, Duration ttl) {
            return store.complete(claim, ttl);
          }

          @Override
          public void release(Claim claim) {
            store.release(claim);
          }

          @Override
          public boolean extend(Claim claim, Duration lease) {
            return store.extend(claim, lease);
          }
        };
    try (IdempotencyGuard guard =
        IdempotencyGuard.newBuilder(slowClaims)
            .lease(Duration.ofSeconds(5))
            .clock(time.clock())
            .heartbeatScheduler(time.scheduler())
            .listener(metrics.guardListener("orders"))
            .build()) {
      assertThat(guard.lock("po-7", ctx -> ctx.isLeaseLost()).executed()).isTrue();
    }
    assertThat(count(MetricNames.LEASES_LOST, "subscription", "orders", "cause", "expired"))
        .isEqualTo(1);
  }

  @Test
  void a_rolled_back_fence_out_is_its_own_outcome_and_not_a_fenced_out_alert() {
    metrics.bindTo(registry);
    metrics.guardListener("orders").fencedOutRolledBack("k", 3);
    metrics.settled("orders", Outcome.FENCED_OUT_ROLLED_BACK, Duration.ofMillis(5));
    assertThat(
            count(
                MetricNames.MESSAGES_SETTLED,
                "subscription",
                "orders",
                "outcome",
                "fenced-out-rolled-back"))
        .isEqualTo(1);
    assertThat(
            count(MetricNames.MESSAGES_SETTLED, "subscription", "orders", "outcome", "fenced-out"))
        .isZero();
    assertThat(count(MetricNames.FENCED_OUT, "subscription", "orders")).isZero();
  }

  @Test
  void group_commit_batches_are_summarised_by_verb_and_size() {
    metrics.bindTo(registry);
    GuardListener listener = metrics.guardListener("orders");
    listener.batch(GuardListener.Verb.CLAIM, 8, Duration.ofMillis(1), true);
    listener.batch(GuardListener.Verb.CLAIM, 2, Duration.ofMillis(1), false);
    listener.batch(GuardListener.Verb.COMPLETE, 5, Duration.ofMillis(1), true);
    var claims = registry.get(MetricNames.LOCK_STORE_BATCH_ENTRIES).tags("verb", "claim").summary();
    assertThat(claims.count()).isEqualTo(2);
    assertThat(claims.totalAmount()).isEqualTo(10.0);
    assertThat(claims.max()).isEqualTo(8.0);
    // Its unit, where its name already ends with it: no Prometheus series is renamed.
    assertThat(claims.getId().getBaseUnit()).isEqualTo("entries");
    assertThat(
            new io.micrometer.prometheusmetrics.PrometheusNamingConvention()
                .name(
                    MetricNames.LOCK_STORE_BATCH_ENTRIES,
                    io.micrometer.core.instrument.Meter.Type.DISTRIBUTION_SUMMARY,
                    "entries"))
        .isEqualTo("pubsub_worker_lock_store_batch_entries");
    assertThat(
            registry
                .get(MetricNames.LOCK_STORE_BATCH_ENTRIES)
                .tags("verb", "complete")
                .summary()
                .totalAmount())
        .isEqualTo(5.0);
  }

  @Test
  void lock_store_calls_are_timed_by_verb_and_result() {
    metrics.bindTo(registry);
    metrics
        .guardListener("orders")
        .backendCall(GuardListener.Verb.CLAIM, Duration.ofMillis(2), true);
    metrics
        .guardListener("orders")
        .backendCall(GuardListener.Verb.CLAIM, Duration.ofMillis(3), false);
    metrics.lockStoreCall(MetricNames.INSPECT, Duration.ofMillis(1), true);
    assertThat(
            registry
                .get(MetricNames.LOCK_STORE_CALLS)
                .tags("verb", "claim", "result", "success")
                .timer()
                .count())
        .isEqualTo(1);
    assertThat(
            registry
                .get(MetricNames.LOCK_STORE_CALLS)
                .tags("verb", "claim", "result", "failure")
                .timer()
                .count())
        .isEqualTo(1);
    assertThat(
            registry
                .get(MetricNames.LOCK_STORE_CALLS)
                .tags("verb", "inspect", "result", "success")
                .timer()
                .count())
        .isEqualTo(1);
  }

  @Test
  void no_listener_method_throws_not_even_on_nonsense_or_before_binding() {
    assertThatCode(
            () -> {
              metrics.received("orders");
              metrics.settled("orders", Outcome.PROCESSED, Duration.ofMillis(1));
              metrics
                  .guardListener("orders")
                  .backendCall(GuardListener.Verb.EXTEND, Duration.ofMillis(1), true);
            })
        .doesNotThrowAnyException();
    metrics.bindTo(registry);
    assertThat(count(MetricNames.MESSAGES_RECEIVED, "subscription", "orders")).isZero();
    assertThatCode(
            () -> {
              metrics.received(null);
              metrics.settled("orders", null, Duration.ofMillis(1));
              metrics.settled("orders", Outcome.PROCESSED, null);
              metrics.ackResponse("orders", null);
              metrics.inFlight(null, 1);
              metrics.guardListener("orders").leaseLost("k", 1, null);
              metrics.guardListener("orders").backendCall(null, Duration.ofMillis(1), true);
              metrics.lockStoreCall("claim", null, true);
            })
        .doesNotThrowAnyException();
    // A null response counts as OTHER; a null handler time records no sample.
    assertThat(count(MetricNames.ACK_RESPONSES, "subscription", "orders", "response", "other"))
        .isEqualTo(1);
    assertThat(
            count(MetricNames.MESSAGES_SETTLED, "subscription", "orders", "outcome", "processed"))
        .isEqualTo(1);
  }

  @Test
  void a_second_registry_is_refused() {
    metrics.bindTo(registry);
    metrics.bindTo(registry);
    assertThatThrownBy(() -> metrics.bindTo(new SimpleMeterRegistry()))
        .isInstanceOf(IllegalStateException.class);
  }

  @Test
  void every_metric_name_has_the_prefix_and_tag_values_are_dashed() throws Exception {
    for (Field f : MetricNames.class.getFields()) {
      if (Modifier.isStatic(f.getModifiers())
          && f.getType() == String.class
          && f.getName().matches("[A-Z_]+")
          && ((String) f.get(null)).contains(".")) {
        assertThat((String) f.get(null)).as(f.getName()).startsWith(MetricNames.PREFIX);
      }
    }
    assertThat(MetricNames.tagValue(Outcome.FINGERPRINT_REJECTED))
        .isEqualTo("fingerprint-rejected");
    assertThat(MetricNames.tagValue(AckResponse.FAILED_PRECONDITION))
        .isEqualTo("failed-precondition");
  }

  private double count(String name, String... tags) {
    Counter c = registry.get(name).tags(tags).counter();
    return c.count();
  }
}
