package dev.pubsubworker.runtime.config;

/** Whether to treat a subscription as having exactly-once delivery. */
public enum ExactlyOnceMode {
  /** Read the subscription at start-up and follow its {@code enableExactlyOnceDelivery}. */
  AUTO,
  /** Assume it is on: ack with response, long minimum ack extensions. */
  ON,
  /** Assume it is off. */
  OFF
}
