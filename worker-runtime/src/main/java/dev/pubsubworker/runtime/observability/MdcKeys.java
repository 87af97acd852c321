package dev.pubsubworker.runtime.observability;

import com.google.api.core.InternalApi;
import java.util.List;

/**
 * The MDC keys the log layouts read: those each subscription's receiver sets on its handler threads
 * (spelled once, in the engine's {@link dev.pubsubworker.pubsub.MdcKeys}), and tracing's.
 */
@InternalApi("the MDC field names of the runtime's log lines")
public final class MdcKeys {

  /** MDC key. */
  public static final String SUBSCRIPTION = dev.pubsubworker.pubsub.MdcKeys.SUBSCRIPTION;

  /** MDC key. */
  public static final String MESSAGE_ID = dev.pubsubworker.pubsub.MdcKeys.MESSAGE_ID;

  /** MDC key. */
  public static final String DELIVERY_ATTEMPT = dev.pubsubworker.pubsub.MdcKeys.DELIVERY_ATTEMPT;

  /** MDC key. */
  public static final String KEY = dev.pubsubworker.pubsub.MdcKeys.KEY;

  /** MDC key. */
  public static final String FENCE = dev.pubsubworker.pubsub.MdcKeys.FENCE;

  /**
   * MDC key, named as Cloud Logging reads it: {@code projects/PROJECT/traces/TRACE_ID} of the
   * delivery's trace (the publisher's, continued), so Cloud Logging links the line to the trace.
   */
  public static final String TRACE = "logging.googleapis.com/trace";

  /**
   * MDC key, named as Cloud Logging reads it: the id of the span current when the line was written.
   */
  public static final String SPAN_ID = "logging.googleapis.com/spanId";

  /** MDC key, named as Cloud Logging reads it: whether the trace is sampled ("true"/"false"). */
  public static final String TRACE_SAMPLED = "logging.googleapis.com/trace_sampled";

  /** In the order JSON log lines carry them. */
  static final List<String> ALL =
      List.of(
          SUBSCRIPTION, MESSAGE_ID, DELIVERY_ATTEMPT, KEY, FENCE, TRACE, SPAN_ID, TRACE_SAMPLED);

  /** The ones whose values are whole numbers. */
  static final List<String> NUMERIC = List.of(DELIVERY_ATTEMPT, FENCE);

  /** The trace fields, which only the JSON format writes (under these names). */
  static final List<String> CLOUD_LOGGING = List.of(TRACE, SPAN_ID, TRACE_SAMPLED);

  /** The ones whose values are booleans. */
  static final List<String> BOOLEAN = List.of(TRACE_SAMPLED);

  private MdcKeys() {}
}
