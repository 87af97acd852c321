package dev.pubsubworker.spring.boot;

import dev.pubsubworker.pubsub.GuardedReceiver;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;

/**
 * The health of the guarded subscriptions ({@code pubSubWorker} in {@code /actuator/health}): the
 * lock store and, as far as Spring Cloud GCP lets it be seen, each subscription's stream.
 *
 * <ul>
 *   <li><b>Lock store</b>: DOWN when the store has not answered for {@code
 *       pubsub-worker.health.lock-store-stale-after} (30 s) — neither the probe, which reads one
 *       key every {@code lock-store-probe-interval} (10 s) on a thread of its own, nor any guard
 *       call — or has not answered yet; the detail says when it last did and why the last call
 *       failed. A hung store makes the answer stale; it never blocks this indicator.
 *   <li><b>Streams</b>: a subscription opened by {@link GuardedSubscriptions#subscribe} is DOWN
 *       unless its {@code Subscriber} is RUNNING (STARTING, STOPPING, TERMINATED, or FAILED with
 *       its cause: a missing subscription, a permission denied); one fed by a {@code
 *       PubSubInboundChannelAdapter} into a {@link GuardedPubSubMessageHandler} is DOWN while the
 *       adapter is not running. What it cannot see: the client retries a broken streaming pull
 *       (UNAVAILABLE, a network outage) forever inside a RUNNING {@code Subscriber}, so an outage
 *       of Pub/Sub itself does not show here (Spring Cloud GCP exposes no signal of it; its own
 *       {@code PubSubHealthIndicator} probes Pub/Sub with a pull); the adapter's {@code Subscriber}
 *       is private to it, so only whether the adapter runs; and a consumer the application passed
 *       to {@code PubSubTemplate.subscribe} itself is reported as {@code not visible}, not held
 *       against the status.
 *   <li><b>Receivers</b>, as details: handlers running, deliveries waiting (parked or queued behind
 *       their key), and since when the oldest running one runs.
 *   <li>OUT_OF_SERVICE once the application began to stop.
 * </ul>
 *
 * Add it to the readiness group to take an instance out of rotation while it cannot process: {@code
 * management.endpoint.health.group.readiness.include=readinessState,pubSubWorker}.
 */
public final class PubSubWorkerHealthIndicator implements HealthIndicator {

  private final GuardedSubscriptions subscriptions;
  private final LockStoreHealth store;

  PubSubWorkerHealthIndicator(GuardedSubscriptions subscriptions, LockStoreHealth store) {
    this.subscriptions = subscriptions;
    this.store = store;
  }

  @Override
  public Health health() {
    boolean up = true;
    Map<String, Object> lockStore = new LinkedHashMap<>();
    lockStore.put("store", store.store());
    store.lastAnswer().ifPresent(t -> lockStore.put("lastAnswer", t.toString()));
    lockStore.put("probe", store.probes() ? "on" : "off (the store has no admin verbs)");
    Optional<String> storeProblem = store.problem();
    if (storeProblem.isPresent()) {
      up = false;
      lockStore.put("problem", storeProblem.get());
    }
    Map<String, Object> streams = new LinkedHashMap<>();
    for (GuardedSubscription s : subscriptions.subscriptions()) {
      GuardedSubscription.Stream stream = s.stream();
      GuardedReceiver r = s.receiver();
      Map<String, Object> d = new LinkedHashMap<>();
      d.put("subscription", s.subscription());
      d.put("stream", stream.source());
      d.put("state", stream.state());
      if (stream.failure() != null) {
        d.put("failure", stream.failure());
      }
      d.put("running", r.running());
      d.put("waiting", r.waiting());
      r.oldestRunningSince().ifPresent(t -> d.put("oldestRunningSince", t.toString()));
      streams.put(s.id(), d);
      up &= stream.up();
    }
    Status status = subscriptions.stopping() ? Status.OUT_OF_SERVICE : up ? Status.UP : Status.DOWN;
    return Health.status(status)
        .withDetail("lockStore", lockStore)
        .withDetail("subscriptions", streams)
        .build();
  }
}
