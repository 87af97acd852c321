package dev.pubsubworker.runtime.observability;

import java.util.List;

/**
 * The MDC keys the dispatcher sets on handler threads (see {@code GuardedDispatcher}) and the log
 * layouts read: the one place their names are spelled.
 */
public final class MdcKeys {

  /** MDC key. */
  public static final String SUBSCRIPTION = "subscription";

  /** MDC key. */
  public static final String MESSAGE_ID = "messageId";

  /** MDC key. */
  public static final String DELIVERY_ATTEMPT = "deliveryAttempt";

  /** MDC key. */
  public static final String KEY = "key";

  /** MDC key. */
  public static final String FENCE = "fence";

  /** In the order JSON log lines carry them. */
  static final List<String> ALL = List.of(SUBSCRIPTION, MESSAGE_ID, DELIVERY_ATTEMPT, KEY, FENCE);

  /** The ones whose values are whole numbers. */
  static final List<String> NUMERIC = List.of(DELIVERY_ATTEMPT, FENCE);

  private MdcKeys() {}
}
