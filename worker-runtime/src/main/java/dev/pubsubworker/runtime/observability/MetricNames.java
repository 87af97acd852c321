package dev.pubsubworker.runtime.observability;

import dev.pubsubworker.pubsub.micrometer.ReceiverMetricNames;

/**
 * Every metric and tag name the worker publishes, under one prefix, {@value #PREFIX}: those of each
 * subscription's receiver and guard are the engine's ({@link ReceiverMetricNames}, the same
 * values), the streams' and the lock-store probe's are the worker's own. Names are Micrometer's
 * dotted form; the Prometheus endpoint turns dots into underscores, adds {@code _total} to counters
 * and {@code _seconds} to timers (so {@link #MESSAGES_RECEIVED} is scraped as {@code
 * pubsub_worker_messages_received_total}).
 *
 * <p>Tag values are lower case with dashes: an {@link dev.pubsubworker.pubsub.Outcome} {@code
 * FENCED_OUT} is {@code fenced-out}, an {@code AckResponse} {@code PERMISSION_DENIED} is {@code
 * permission-denied} (see {@link #tagValue}).
 */
public final class MetricNames {

  /** The prefix of every metric name. */
  public static final String PREFIX = ReceiverMetricNames.PREFIX;

  /** Counter, tag {@link #SUBSCRIPTION}: deliveries that reached the dispatcher. */
  public static final String MESSAGES_RECEIVED = ReceiverMetricNames.MESSAGES_RECEIVED;

  /**
   * Counter, tags {@link #SUBSCRIPTION} and {@link #OUTCOME}: deliveries settled (acked or nacked),
   * by how.
   */
  public static final String MESSAGES_SETTLED = ReceiverMetricNames.MESSAGES_SETTLED;

  /**
   * Timer with histogram buckets, tags {@link #SUBSCRIPTION} and {@link #OUTCOME}: how long one
   * delivery took from dispatch to settlement, guard calls included.
   */
  public static final String HANDLER_DURATION = ReceiverMetricNames.HANDLER_DURATION;

  /** Gauge, tag {@link #SUBSCRIPTION}: deliveries whose handling is in progress. */
  public static final String MESSAGES_IN_FLIGHT = ReceiverMetricNames.MESSAGES_IN_FLIGHT;

  /**
   * Gauge, tag {@link #SUBSCRIPTION}: deliveries that wait without a thread, parked (their key held
   * by another claim) or queued locally behind a delivery of the same key.
   */
  public static final String MESSAGES_PARKED = ReceiverMetricNames.MESSAGES_PARKED;

  /**
   * Timer with histogram buckets, tags {@link #SUBSCRIPTION} and {@link #OUTCOME}: how long a
   * delivery that waited (parked or queued locally) waited, from when it began to wait until it was
   * settled.
   */
  public static final String PARKED_WAIT = ReceiverMetricNames.PARKED_WAIT;

  /**
   * Counter, tags {@link #SUBSCRIPTION} and {@link #RESPONSE}: the results of acks on subscriptions
   * with exactly-once delivery.
   */
  public static final String ACK_RESPONSES = ReceiverMetricNames.ACK_RESPONSES;

  /**
   * Timer with histogram buckets, tags {@link #VERB} and {@link #RESULT}: lock-store calls, by verb
   * ({@code claim}, {@code complete}, {@code release}, {@code extend}, and {@code inspect} for the
   * readiness probe).
   */
  public static final String LOCK_STORE_CALLS = ReceiverMetricNames.LOCK_STORE_CALLS;

  /**
   * Distribution summary, tag {@link #VERB} ({@code claim}, {@code complete}): the entries of each
   * group-commit batch the guard sent to the lock store (at least 2; a lone call is not a batch and
   * is not recorded here). Its count is the batched round trips; its sum over {@link
   * #LOCK_STORE_CALLS}' count of the verb is the share of calls that went in a batch.
   */
  public static final String LOCK_STORE_BATCH_ENTRIES =
      ReceiverMetricNames.LOCK_STORE_BATCH_ENTRIES;

  /**
   * Gauge, seconds: how long the oldest lock-store call in progress has been running, 0 when none
   * is ({@code /healthz} fails once it exceeds {@code lock-store-stuck-after}).
   */
  public static final String LOCK_STORE_OLDEST_CALL = PREFIX + "lock.store.oldest.call.age";

  /**
   * Gauge, seconds, tag {@link #SUBSCRIPTION}: how long the subscription's oldest delivery in
   * progress on a handler thread (claim, handler, DONE) has been running, 0 when none is ({@code
   * /healthz} fails once it exceeds {@code handler-stuck-after}, when that is set).
   */
  public static final String HANDLER_OLDEST_AGE = PREFIX + "handler.oldest.age";

  /** Gauge: lock-store calls in progress (claims, DONE writes, releases, extensions). */
  public static final String LOCK_STORE_CALLS_IN_PROGRESS = PREFIX + "lock.store.calls.in.progress";

  /**
   * Counter, tags {@link #SUBSCRIPTION} and {@link #KIND}: claims won, first ({@code first}, fence
   * 1) or over an earlier claim of the key ({@code reclaim}: a retry after a failure, a takeover
   * after a crash, or a key whose suppression window ended).
   */
  public static final String GUARD_CLAIMS = ReceiverMetricNames.GUARD_CLAIMS;

  /** Counter, tag {@link #SUBSCRIPTION}: leases extended by the heartbeat. */
  public static final String LEASE_EXTENSIONS = ReceiverMetricNames.LEASE_EXTENSIONS;

  /**
   * Counter, tags {@link #SUBSCRIPTION} and {@link #CAUSE} ({@code fence-stale}, {@code
   * store-unreachable}, {@code expired}: ran out on the guard's clock before an extension confirmed
   * it): leases lost while the handler ran.
   */
  public static final String LEASES_LOST = ReceiverMetricNames.LEASES_LOST;

  /**
   * Counter, tag {@link #SUBSCRIPTION}: handlers that succeeded but found their claim taken over
   * when writing DONE (alert on it: the work may run twice).
   */
  public static final String FENCED_OUT = ReceiverMetricNames.FENCED_OUT;

  /**
   * Counter, tag {@link #SUBSCRIPTION}: handlers that succeeded but whose DONE (or mutex release)
   * failed in the lock store (alert on it).
   */
  public static final String COMPLETE_FAILED = ReceiverMetricNames.COMPLETE_FAILED;

  /**
   * Counter, tag {@link #SUBSCRIPTION}: deliveries whose payload fingerprint differed from the one
   * stored for their key (a key collision or a producer bug).
   */
  public static final String FINGERPRINT_MISMATCHES = ReceiverMetricNames.FINGERPRINT_MISMATCHES;

  /**
   * Counter, tag {@link #SUBSCRIPTION}: streaming-pull streams opened, the first one and every
   * reconnect (a rate above a few per hour means streams keep breaking).
   */
  public static final String STREAMS_OPENED = PREFIX + "pubsub.streams.opened";

  /**
   * Counter, tags {@link #SUBSCRIPTION} and {@link #CODE}: streaming-pull streams that closed with
   * an error; the client reconnects on its own, and {@code /readyz} reports a subscription whose
   * stream stays down.
   */
  public static final String STREAM_ERRORS = PREFIX + "pubsub.stream.errors";

  /** Tag: a gRPC status code, e.g. {@code unavailable}. */
  public static final String CODE = "code";

  /** Tag: the subscription's id in the config ({@code pubsub-worker.subscriptions.ID}). */
  public static final String SUBSCRIPTION = ReceiverMetricNames.SUBSCRIPTION;

  /** Tag: a {@link dev.pubsubworker.pubsub.Outcome}, e.g. {@code processed}. */
  public static final String OUTCOME = ReceiverMetricNames.OUTCOME;

  /** Tag: an exactly-once {@code AckResponse}, e.g. {@code successful}. */
  public static final String RESPONSE = ReceiverMetricNames.RESPONSE;

  /** Tag: a lock-store verb. */
  public static final String VERB = ReceiverMetricNames.VERB;

  /** Tag: {@value #SUCCESS} or {@value #FAILURE} (the call threw). */
  public static final String RESULT = ReceiverMetricNames.RESULT;

  /** Tag: why a lease was lost. */
  public static final String CAUSE = ReceiverMetricNames.CAUSE;

  /** Tag: {@value #FIRST} or {@value #RECLAIM}. */
  public static final String KIND = ReceiverMetricNames.KIND;

  /** {@link #RESULT} of a lock-store call that returned. */
  public static final String SUCCESS = ReceiverMetricNames.SUCCESS;

  /** {@link #RESULT} of a lock-store call that threw. */
  public static final String FAILURE = ReceiverMetricNames.FAILURE;

  /** {@link #KIND} of a claim at fence 1. */
  public static final String FIRST = ReceiverMetricNames.FIRST;

  /** {@link #KIND} of a claim above fence 1. */
  public static final String RECLAIM = ReceiverMetricNames.RECLAIM;

  /** {@link #VERB} of the readiness probe's read. */
  public static final String INSPECT = "inspect";

  private MetricNames() {}

  /** An enum constant as a tag value: lower case, underscores as dashes. */
  public static String tagValue(Enum<?> value) {
    return ReceiverMetricNames.tagValue(value);
  }
}
