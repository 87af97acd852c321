package dev.pubsubworker.runtime.observability;

import java.util.List;

/** The MDC keys the dispatcher sets on handler threads (see {@code GuardedDispatcher}). */
final class MdcKeys {

  static final String SUBSCRIPTION = "subscription";
  static final String MESSAGE_ID = "messageId";
  static final String DELIVERY_ATTEMPT = "deliveryAttempt";
  static final String KEY = "key";
  static final String FENCE = "fence";

  /** In the order JSON log lines carry them. */
  static final List<String> ALL = List.of(SUBSCRIPTION, MESSAGE_ID, DELIVERY_ATTEMPT, KEY, FENCE);

  /** The ones whose values are whole numbers. */
  static final List<String> NUMERIC = List.of(DELIVERY_ATTEMPT, FENCE);

  private MdcKeys() {}
}
