package dev.pubsubworker.embedded;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;

/** Pub/Sub's limits and defaults, and the errors for values outside them. */
final class Validation {

  /** Default ack deadline of a subscription, seconds. */
  static final int DEFAULT_ACK_DEADLINE_SECONDS = 10;

  static final int MIN_ACK_DEADLINE_SECONDS = 10;
  static final int MAX_ACK_DEADLINE_SECONDS = 600;
  static final int DEFAULT_MAX_DELIVERY_ATTEMPTS = 5;
  static final Duration DEFAULT_MIN_BACKOFF = Duration.ofSeconds(10);
  static final Duration DEFAULT_MAX_BACKOFF = Duration.ofSeconds(600);

  /** Pub/Sub's publish request limit (and so the largest message), bytes. */
  static final int MAX_PUBLISH_REQUEST_BYTES = 10 * 1024 * 1024;

  private Validation() {}

  static StatusRuntimeException invalid(String message) {
    return Status.INVALID_ARGUMENT.withDescription(message).asRuntimeException();
  }
}
