package dev.pubsubworker.pubsub.micrometer;

import java.util.Locale;

/**
 * Every metric and tag name {@link ReceiverMetrics} registers, under one prefix, {@value #PREFIX}.
 * Names are Micrometer's dotted form; a Prometheus registry turns dots into underscores, adds
 * {@code _total} to counters and {@code _seconds} to timers (so {@link #MESSAGES_RECEIVED} is
 * scraped as {@code pubsub_worker_messages_received_total}). Timers are in the base unit, seconds.
 * A meter carries a base unit where its name already ends with it ({@link
 * #LOCK_STORE_BATCH_ENTRIES}: entries; the timers: seconds), so registries that show units (OTLP,
 * Cloud Monitoring) get it while the Prometheus names stay as they are; the counters and gauges of
 * things counted carry none, because Micrometer's Prometheus naming appends a base unit to a name
 * that does not end with it, which would rename every scraped series.
 *
 * <p>Besides the tags named here, every meter carries the tags given to {@link
 * ReceiverMetrics#of(java.util.Collection, Iterable)}. Tag values are lower case with dashes: an
 * {@link dev.pubsubworker.pubsub.Outcome} {@code FENCED_OUT} is {@code fenced-out}, an {@code
 * AckResponse} {@code PERMISSION_DENIED} is {@code permission-denied} (see {@link #tagValue}).
 */
public final class ReceiverMetricNames {

  /** The prefix of every metric name. */
  public static final String PREFIX = "pubsub.worker.";

  /** Counter, tag {@link #SUBSCRIPTION}: deliveries that reached the receiver. */
  public static final String MESSAGES_RECEIVED = PREFIX + "messages.received";

  /**
   * Counter, tags {@link #SUBSCRIPTION} and {@link #OUTCOME}: deliveries settled (acked or nacked),
   * by how.
   */
  public static final String MESSAGES_SETTLED = PREFIX + "messages.settled";

  /**
   * Timer with histogram buckets, tags {@link #SUBSCRIPTION} and {@link #OUTCOME}: how long one
   * delivery took from receipt to settlement, guard calls included.
   */
  public static final String HANDLER_DURATION = PREFIX + "handler.duration";

  /** Gauge, tag {@link #SUBSCRIPTION}: deliveries whose handling is in progress. */
  public static final String MESSAGES_IN_FLIGHT = PREFIX + "messages.in.flight";

  /**
   * Gauge, tag {@link #SUBSCRIPTION}: deliveries that wait without a thread, parked (their key held
   * by another claim) or queued locally behind a delivery of the same key.
   */
  public static final String MESSAGES_PARKED = PREFIX + "messages.parked";

  /**
   * Timer with histogram buckets, tags {@link #SUBSCRIPTION} and {@link #OUTCOME}: how long a
   * delivery that waited (parked or queued locally) waited, from when it began to wait until it was
   * settled.
   */
  public static final String PARKED_WAIT = PREFIX + "parked.wait";

  /**
   * Counter, tags {@link #SUBSCRIPTION} and {@link #RESPONSE}: the results of acks made through the
   * receiver's exactly-once form.
   */
  public static final String ACK_RESPONSES = PREFIX + "ack.responses";

  /**
   * Timer with histogram buckets, tags {@link #VERB} and {@link #RESULT}: lock-store calls, by verb
   * ({@code claim}, {@code complete}, {@code release}, {@code extend}, and whatever {@link
   * ReceiverMetrics#recordStoreCall} is given).
   */
  public static final String LOCK_STORE_CALLS = PREFIX + "lock.store.calls";

  /**
   * Distribution summary, tag {@link #VERB} ({@code claim}, {@code complete}): the entries of each
   * group-commit batch the guard sent to the lock store (at least 2; a lone call is not a batch and
   * is not recorded here). Its count is the batched round trips; its sum over {@link
   * #LOCK_STORE_CALLS}' count of the verb is the share of calls that went in a batch.
   */
  public static final String LOCK_STORE_BATCH_ENTRIES = PREFIX + "lock.store.batch.entries";

  /**
   * Counter, tags {@link #SUBSCRIPTION} and {@link #KIND}: claims won, first ({@code first}, fence
   * 1) or over an earlier claim of the key ({@code reclaim}: a retry after a failure, a takeover
   * after a crash, or a key whose suppression window ended).
   */
  public static final String GUARD_CLAIMS = PREFIX + "guard.claims";

  /** Counter, tag {@link #SUBSCRIPTION}: leases extended by the heartbeat. */
  public static final String LEASE_EXTENSIONS = PREFIX + "lease.extensions";

  /**
   * Counter, tags {@link #SUBSCRIPTION} and {@link #CAUSE} ({@code fence-stale}, {@code
   * store-unreachable}): leases lost while the handler ran.
   */
  public static final String LEASES_LOST = PREFIX + "lease.lost";

  /**
   * Counter, tag {@link #SUBSCRIPTION}: handlers that succeeded but found their claim taken over
   * when writing DONE (alert on it: the work may run twice).
   */
  public static final String FENCED_OUT = PREFIX + "guard.fenced.out";

  /**
   * Counter, tag {@link #SUBSCRIPTION}: handlers that succeeded but whose DONE (or mutex release)
   * failed in the lock store (alert on it).
   */
  public static final String COMPLETE_FAILED = PREFIX + "guard.complete.failed";

  /**
   * Counter, tag {@link #SUBSCRIPTION}: deliveries whose payload fingerprint differed from the one
   * stored for their key (a key collision or a producer bug).
   */
  public static final String FINGERPRINT_MISMATCHES = PREFIX + "guard.fingerprint.mismatches";

  /** Tag: the receiver's subscription name ({@code GuardedReceiver.newBuilder}). */
  public static final String SUBSCRIPTION = "subscription";

  /** Tag: a {@link dev.pubsubworker.pubsub.Outcome}, e.g. {@code processed}. */
  public static final String OUTCOME = "outcome";

  /** Tag: an exactly-once {@code AckResponse}, e.g. {@code successful}. */
  public static final String RESPONSE = "response";

  /** Tag: a lock-store verb. */
  public static final String VERB = "verb";

  /** Tag: {@value #SUCCESS} or {@value #FAILURE} (the call threw). */
  public static final String RESULT = "result";

  /** Tag: why a lease was lost. */
  public static final String CAUSE = "cause";

  /** Tag: {@value #FIRST} or {@value #RECLAIM}. */
  public static final String KIND = "kind";

  /** {@link #RESULT} of a lock-store call that returned. */
  public static final String SUCCESS = "success";

  /** {@link #RESULT} of a lock-store call that threw. */
  public static final String FAILURE = "failure";

  /** {@link #KIND} of a claim at fence 1. */
  public static final String FIRST = "first";

  /** {@link #KIND} of a claim above fence 1. */
  public static final String RECLAIM = "reclaim";

  private ReceiverMetricNames() {}

  /** An enum constant as a tag value: lower case, underscores as dashes. */
  public static String tagValue(Enum<?> value) {
    return value.name().toLowerCase(Locale.ROOT).replace('_', '-');
  }
}
