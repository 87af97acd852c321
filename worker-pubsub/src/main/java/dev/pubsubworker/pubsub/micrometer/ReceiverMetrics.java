package dev.pubsubworker.pubsub.micrometer;

import com.google.cloud.pubsub.v1.AckResponse;
import dev.pubsubworker.core.GuardListener;
import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.pubsub.ReceiverListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The metrics of {@link dev.pubsubworker.pubsub.GuardedReceiver}s and their guards, names in {@link
 * ReceiverMetricNames}: a {@link MeterBinder} that observes receivers as their {@link
 * ReceiverListener} and each receiver's guard through the {@link GuardListener} {@link
 * #guardListener} gives for its subscription. One instance serves any number of receivers, told
 * apart by the {@link ReceiverMetricNames#SUBSCRIPTION} tag.
 *
 * <pre>{@code
 * ReceiverMetrics metrics = ReceiverMetrics.of(List.of("orders"), Tags.of("app", "shop"));
 * metrics.bindTo(registry);
 * IdempotencyGuard guard =
 *     IdempotencyGuard.newBuilder(backend).listener(metrics.guardListener("orders")).build();
 * GuardedReceiver receiver =
 *     GuardedReceiver.newBuilder("orders", handler).guard(guard).key(key).listener(metrics).build();
 * }</pre>
 *
 * <p>The meters of every subscription given to {@link #of} are registered at zero when bound, so
 * rates and alerts work from the first scrape; others appear with their first event, histogram
 * timers with their first sample. Events that arrive before {@link #bindTo} are dropped.
 *
 * <p>Thread-safe. No method ever throws: a failure is logged (once at WARN, then at DEBUG) and the
 * event dropped, so metrics never change how a delivery is settled.
 */
// Meters are kept in arrays indexed by enum ordinal on purpose: no map lookup per delivery.
@SuppressWarnings("EnumOrdinal")
public final class ReceiverMetrics implements MeterBinder, ReceiverListener {

  private static final Logger log = LoggerFactory.getLogger(ReceiverMetrics.class);

  /** Handler buckets, from a fast duplicate skip to work that runs for most of an hour. */
  private static final Duration[] HANDLER_BUCKETS = {
    Duration.ofMillis(5),
    Duration.ofMillis(10),
    Duration.ofMillis(25),
    Duration.ofMillis(50),
    Duration.ofMillis(100),
    Duration.ofMillis(250),
    Duration.ofMillis(500),
    Duration.ofSeconds(1),
    Duration.ofMillis(2500),
    Duration.ofSeconds(5),
    Duration.ofSeconds(10),
    Duration.ofSeconds(30),
    Duration.ofMinutes(1),
    Duration.ofMinutes(5),
    Duration.ofMinutes(15),
    Duration.ofHours(1)
  };

  /** Lock-store buckets, from an in-process call to a store timing out. */
  private static final Duration[] LOCK_STORE_BUCKETS = {
    Duration.ofNanos(500_000),
    Duration.ofMillis(1),
    Duration.ofMillis(2),
    Duration.ofMillis(5),
    Duration.ofMillis(10),
    Duration.ofMillis(25),
    Duration.ofMillis(50),
    Duration.ofMillis(100),
    Duration.ofMillis(250),
    Duration.ofMillis(500),
    Duration.ofSeconds(1),
    Duration.ofMillis(2500),
    Duration.ofSeconds(5),
    Duration.ofSeconds(10)
  };

  private final List<String> subscriptions;
  private final Tags tags;
  private final Map<String, SubscriptionMeters> bySubscription = new ConcurrentHashMap<>();
  private final Map<StoreCall, Timer> storeTimers = new ConcurrentHashMap<>();

  /** The guard verbs' store timers at [verb ordinal * 2 + (success ? 1 : 0)], made on first use. */
  private final AtomicReferenceArray<Timer> verbTimers =
      new AtomicReferenceArray<>(GuardListener.Verb.values().length * 2);

  /** The guard verbs' batch-size summaries by verb ordinal, made on first use. */
  private final AtomicReferenceArray<DistributionSummary> batchSizes =
      new AtomicReferenceArray<>(GuardListener.Verb.values().length);

  private final AtomicBoolean warned = new AtomicBoolean();
  private volatile @Nullable MeterRegistry registry;

  private ReceiverMetrics(Collection<String> subscriptions, Iterable<Tag> tags) {
    this.subscriptions = List.copyOf(subscriptions);
    this.tags = Tags.of(Objects.requireNonNull(tags, "tags"));
  }

  /**
   * Metrics with no tags but their own.
   *
   * @param subscriptions the subscriptions (receivers' names) whose meters are registered at zero
   *     when bound
   */
  public static ReceiverMetrics of(Collection<String> subscriptions) {
    return new ReceiverMetrics(subscriptions, Tags.empty());
  }

  /**
   * Metrics whose every meter also carries {@code tags} (e.g. the application's name).
   *
   * @param subscriptions the subscriptions (receivers' names) whose meters are registered at zero
   *     when bound
   * @param tags added to every meter; none may be one of {@link ReceiverMetricNames}' tag names
   * @throws IllegalArgumentException if a tag uses one of {@link ReceiverMetricNames}' tag names
   */
  public static ReceiverMetrics of(Collection<String> subscriptions, Iterable<Tag> tags) {
    for (Tag t : tags) {
      if (List.of(
              ReceiverMetricNames.SUBSCRIPTION,
              ReceiverMetricNames.OUTCOME,
              ReceiverMetricNames.RESPONSE,
              ReceiverMetricNames.VERB,
              ReceiverMetricNames.RESULT,
              ReceiverMetricNames.CAUSE,
              ReceiverMetricNames.KIND)
          .contains(t.getKey())) {
        throw new IllegalArgumentException(
            "tag " + t.getKey() + " is one of the metrics' own tags; use another name");
      }
    }
    return new ReceiverMetrics(subscriptions, tags);
  }

  /**
   * Registers every given subscription's meters in {@code registry}; from then on events are
   * recorded there. Binding the same registry again does nothing.
   *
   * @throws IllegalStateException if already bound to another registry
   */
  @Override
  public synchronized void bindTo(MeterRegistry registry) {
    Objects.requireNonNull(registry, "registry");
    if (this.registry != null && this.registry != registry) {
      throw new IllegalStateException("ReceiverMetrics is already bound to another registry");
    }
    this.registry = registry;
    subscriptions.forEach(this::meters);
  }

  /**
   * The listener for the guard of the receiver of {@code subscription}: its events are recorded
   * under that subscription (lock-store call timings under none).
   */
  public GuardListener guardListener(String subscription) {
    return new SubscriptionGuardListener(Objects.requireNonNull(subscription, "subscription"));
  }

  /**
   * Records one lock-store call made outside a guard (a readiness probe's read, say) on {@link
   * ReceiverMetricNames#LOCK_STORE_CALLS}. Never throws.
   *
   * @param verb the {@link ReceiverMetricNames#VERB} tag, e.g. {@code inspect}
   */
  public void recordStoreCall(String verb, Duration latency, boolean succeeded) {
    safely(
        () -> {
          MeterRegistry r = registry;
          if (r == null) {
            return;
          }
          storeTimer(r, new StoreCall(verb, succeeded)).record(latency);
        });
  }

  // ReceiverListener. The per-delivery events record on pre-resolved meters: one map read for the
  // subscription, then array and field reads; no lambdas, tags or meter lookups per call.

  @Override
  public void received(String subscription) {
    try {
      meters(subscription).received.increment();
    } catch (RuntimeException e) {
      dropped(e);
    }
  }

  @Override
  public void settled(String subscription, Outcome outcome, Duration handlerTime) {
    try {
      SubscriptionMeters m = meters(subscription);
      m.settled[outcome.ordinal()].increment();
      if (handlerTime != null && !handlerTime.isZero() && !handlerTime.isNegative()) {
        m.handlerTimer(outcome).record(handlerTime);
      }
    } catch (RuntimeException e) {
      dropped(e);
    }
  }

  @Override
  public void inFlight(String subscription, int delta) {
    try {
      meters(subscription).inFlight.addAndGet(delta);
    } catch (RuntimeException e) {
      dropped(e);
    }
  }

  @Override
  public void parked(String subscription, int delta) {
    safely(() -> meters(subscription).parked.addAndGet(delta));
  }

  @Override
  public void parkedSettled(String subscription, Outcome outcome, Duration waited) {
    safely(
        () -> {
          if (waited != null && !waited.isNegative()) {
            meters(subscription).parkedWaitTimer(outcome).record(waited);
          }
        });
  }

  @Override
  public void ackResponse(String subscription, AckResponse response) {
    safely(
        () ->
            Objects.requireNonNull(
                    meters(subscription)
                        .ackResponses
                        .get(response == null ? AckResponse.OTHER : response))
                .increment());
  }

  /** Records one guard store call on its pre-resolved timer. Never throws. */
  private void guardStoreCall(GuardListener.Verb verb, Duration latency, boolean succeeded) {
    try {
      MeterRegistry r = registry;
      if (r == null) {
        return;
      }
      int i = verb.ordinal() * 2 + (succeeded ? 1 : 0);
      Timer t = verbTimers.get(i);
      if (t == null) {
        // A benign race: the registry hands every racer the same timer.
        t = storeTimer(r, new StoreCall(ReceiverMetricNames.tagValue(verb), succeeded));
        verbTimers.set(i, t);
      }
      t.record(latency);
    } catch (RuntimeException e) {
      dropped(e);
    }
  }

  /** Records one group-commit batch of {@code verb} on its pre-resolved summary. Never throws. */
  private void guardBatch(GuardListener.Verb verb, int size) {
    try {
      MeterRegistry r = registry;
      if (r == null) {
        return;
      }
      DistributionSummary d = batchSizes.get(verb.ordinal());
      if (d == null) {
        // A benign race: the registry hands every racer the same summary.
        d =
            DistributionSummary.builder(ReceiverMetricNames.LOCK_STORE_BATCH_ENTRIES)
                .description("Entries per group-commit batch sent to the lock store, by verb")
                .baseUnit("entries")
                .tags(tags)
                .tag(ReceiverMetricNames.VERB, ReceiverMetricNames.tagValue(verb))
                .register(r);
        batchSizes.set(verb.ordinal(), d);
      }
      d.record(size);
    } catch (RuntimeException e) {
      dropped(e);
    }
  }

  private Timer storeTimer(MeterRegistry r, StoreCall call) {
    return storeTimers.computeIfAbsent(
        call,
        c ->
            Timer.builder(ReceiverMetricNames.LOCK_STORE_CALLS)
                .description("Lock-store calls, by verb and result")
                .tags(tags)
                .tag(ReceiverMetricNames.VERB, c.verb())
                .tag(
                    ReceiverMetricNames.RESULT,
                    c.succeeded() ? ReceiverMetricNames.SUCCESS : ReceiverMetricNames.FAILURE)
                .serviceLevelObjectives(LOCK_STORE_BUCKETS)
                .register(r));
  }

  /** The subscription's meters, registering them on first use; detached ones before binding. */
  private SubscriptionMeters meters(String subscription) {
    MeterRegistry r = registry;
    if (r == null) {
      return SubscriptionMeters.DETACHED;
    }
    SubscriptionMeters m = bySubscription.get(subscription);
    return m != null
        ? m
        : bySubscription.computeIfAbsent(
            subscription, s -> new SubscriptionMeters(r, tags.and(subscriptionTag(s))));
  }

  private static Tag subscriptionTag(String subscription) {
    return Tag.of(ReceiverMetricNames.SUBSCRIPTION, subscription);
  }

  private void safely(Runnable record) {
    try {
      record.run();
    } catch (RuntimeException e) {
      dropped(e);
    }
  }

  private void dropped(RuntimeException e) {
    if (warned.compareAndSet(false, true)) {
      log.warn("recording a metric failed; the event is dropped (further failures at DEBUG)", e);
    } else {
      log.debug("recording a metric failed; the event is dropped", e);
    }
  }

  /** One subscription's guard events. */
  private final class SubscriptionGuardListener implements GuardListener {

    private final String subscription;
    private volatile @Nullable SubscriptionMeters resolved;

    SubscriptionGuardListener(String subscription) {
      this.subscription = subscription;
    }

    /** This subscription's meters, looked up once after binding. */
    private SubscriptionMeters meters() {
      SubscriptionMeters m = resolved;
      if (m == null) {
        m = ReceiverMetrics.this.meters(subscription);
        if (m != SubscriptionMeters.DETACHED) {
          resolved = m;
        }
      }
      return m;
    }

    @Override
    public void claimed(String key, long fence, boolean reclaim) {
      try {
        SubscriptionMeters m = meters();
        (reclaim ? m.reclaims : m.firstClaims).increment();
      } catch (RuntimeException e) {
        dropped(e);
      }
    }

    @Override
    public void leaseExtended(String key, long fence) {
      safely(() -> meters().leaseExtensions.increment());
    }

    @Override
    public void leaseLost(String key, long fence, GuardListener.LeaseLoss cause) {
      safely(() -> Objects.requireNonNull(meters().leasesLost.get(cause)).increment());
    }

    @Override
    public void fencedOut(String key, long fence) {
      safely(() -> meters().fencedOut.increment());
    }

    @Override
    public void completeFailed(String key, long fence, RuntimeException error) {
      safely(() -> meters().completeFailed.increment());
    }

    @Override
    public void fingerprintMismatch(String key) {
      safely(() -> meters().fingerprintMismatches.increment());
    }

    @Override
    public void backendCall(Verb verb, Duration latency, boolean succeeded) {
      guardStoreCall(verb, latency, succeeded);
    }

    @Override
    public void batch(Verb verb, int size, Duration latency, boolean succeeded) {
      guardBatch(verb, size);
    }
  }

  private record StoreCall(String verb, boolean succeeded) {}

  /** One subscription's meters. */
  private static final class SubscriptionMeters {

    /** Absorbs events before binding: meters of a throwaway registry nobody scrapes. */
    static final SubscriptionMeters DETACHED =
        new SubscriptionMeters(new SimpleMeterRegistry(), Tags.of(subscriptionTag("detached")));

    private final MeterRegistry registry;
    private final Tags tags;
    final Counter received;
    final Counter[] settled = new Counter[Outcome.values().length];
    private final AtomicReferenceArray<Timer> handlerTimers =
        new AtomicReferenceArray<>(Outcome.values().length);
    final AtomicInteger inFlight = new AtomicInteger();
    final AtomicInteger parked = new AtomicInteger();
    final Map<Outcome, Timer> parkedWaitTimers = new ConcurrentHashMap<>();
    final Map<AckResponse, Counter> ackResponses = new EnumMap<>(AckResponse.class);
    final Counter firstClaims;
    final Counter reclaims;
    final Counter leaseExtensions;
    final Map<GuardListener.LeaseLoss, Counter> leasesLost =
        new EnumMap<>(GuardListener.LeaseLoss.class);
    final Counter fencedOut;
    final Counter completeFailed;
    final Counter fingerprintMismatches;

    /**
     * @param tags the caller's tags and the subscription's
     */
    SubscriptionMeters(MeterRegistry registry, Tags tags) {
      this.registry = registry;
      this.tags = tags;
      received =
          counter(ReceiverMetricNames.MESSAGES_RECEIVED, "Deliveries that reached the dispatcher")
              .register(registry);
      for (Outcome o : Outcome.values()) {
        settled[o.ordinal()] =
            counter(ReceiverMetricNames.MESSAGES_SETTLED, "Deliveries settled, by outcome")
                .tag(ReceiverMetricNames.OUTCOME, ReceiverMetricNames.tagValue(o))
                .register(registry);
      }
      Gauge.builder(ReceiverMetricNames.MESSAGES_IN_FLIGHT, inFlight, AtomicInteger::get)
          .description("Deliveries whose handling is in progress")
          .tags(tags)
          .register(registry);
      Gauge.builder(ReceiverMetricNames.MESSAGES_PARKED, parked, AtomicInteger::get)
          .description("Deliveries parked or queued locally behind their key, holding no thread")
          .tags(tags)
          .register(registry);
      for (AckResponse r : AckResponse.values()) {
        ackResponses.put(
            r,
            counter(ReceiverMetricNames.ACK_RESPONSES, "Exactly-once ack results, by response")
                .tag(ReceiverMetricNames.RESPONSE, ReceiverMetricNames.tagValue(r))
                .register(registry));
      }
      firstClaims = claims(ReceiverMetricNames.FIRST);
      reclaims = claims(ReceiverMetricNames.RECLAIM);
      leaseExtensions =
          counter(ReceiverMetricNames.LEASE_EXTENSIONS, "Leases extended by the heartbeat")
              .register(registry);
      for (GuardListener.LeaseLoss cause : GuardListener.LeaseLoss.values()) {
        leasesLost.put(
            cause,
            counter(ReceiverMetricNames.LEASES_LOST, "Leases lost while the handler ran, by cause")
                .tag(ReceiverMetricNames.CAUSE, ReceiverMetricNames.tagValue(cause))
                .register(registry));
      }
      fencedOut =
          counter(
                  ReceiverMetricNames.FENCED_OUT,
                  "Handlers that succeeded but were fenced out at DONE")
              .register(registry);
      completeFailed =
          counter(
                  ReceiverMetricNames.COMPLETE_FAILED,
                  "Handlers that succeeded but whose DONE failed in the lock store")
              .register(registry);
      fingerprintMismatches =
          counter(
                  ReceiverMetricNames.FINGERPRINT_MISMATCHES,
                  "Deliveries whose payload fingerprint differed from their key's")
              .register(registry);
    }

    /** The outcome's handler timer, registered with its first sample (a benign race). */
    Timer handlerTimer(Outcome outcome) {
      Timer t = handlerTimers.get(outcome.ordinal());
      if (t == null) {
        t =
            Timer.builder(ReceiverMetricNames.HANDLER_DURATION)
                .description("Time from dispatch to settlement of one delivery")
                .tags(tags)
                .tag(ReceiverMetricNames.OUTCOME, ReceiverMetricNames.tagValue(outcome))
                .serviceLevelObjectives(HANDLER_BUCKETS)
                .register(registry);
        handlerTimers.set(outcome.ordinal(), t);
      }
      return t;
    }

    Timer parkedWaitTimer(Outcome outcome) {
      return parkedWaitTimers.computeIfAbsent(
          outcome,
          o ->
              Timer.builder(ReceiverMetricNames.PARKED_WAIT)
                  .description("Time a delivery waited, parked or queued, until it was settled")
                  .tags(tags)
                  .tag(ReceiverMetricNames.OUTCOME, ReceiverMetricNames.tagValue(o))
                  .serviceLevelObjectives(HANDLER_BUCKETS)
                  .register(registry));
    }

    private Counter claims(String kind) {
      return counter(ReceiverMetricNames.GUARD_CLAIMS, "Claims won, first or reclaimed")
          .tag(ReceiverMetricNames.KIND, kind)
          .register(registry);
    }

    private Counter.Builder counter(String name, String description) {
      return Counter.builder(name).description(description).tags(tags);
    }
  }
}
