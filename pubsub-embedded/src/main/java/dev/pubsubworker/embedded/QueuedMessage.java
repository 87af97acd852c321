package dev.pubsubworker.embedded;

import com.google.pubsub.v1.PubsubMessage;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One message in one subscription, with its delivery state. Guarded by the {@link Broker}'s lock.
 */
final class QueuedMessage {

  enum State {
    /** In the ready queue: may be delivered now. */
    READY,
    /** Waiting for its retry backoff to pass. */
    DELAYED,
    /** Delivered and not yet acked, nacked or expired. */
    LEASED,
    /** Behind an earlier message of the same ordering key that is waiting for (re)delivery. */
    WAITING_FOR_KEY,
    /** Acknowledged (or dead-lettered, or sought past). */
    ACKED
  }

  final PubsubMessage message;
  final long sequence;
  final long bytes;
  final Instant publishTime;
  State state;

  /** How many times it has been delivered. */
  int deliveries;

  Instant availableAt;
  Instant deadline;

  /** The ack id of the current lease, null when not leased. */
  String currentAckId;

  /** Bumped whenever the lease changes, so stale expiry records are ignored. */
  long leaseGeneration;

  /** The stream the current lease went to; null for a unary Pull or when not leased. */
  PullStream leasedTo;

  /** Every ack id handed out for this message while it is unacked, with its stream (or null). */
  final Map<String, PullStream> ackIds = new LinkedHashMap<>();

  QueuedMessage(PubsubMessage message, long sequence, Instant publishTime) {
    this.message = message;
    this.sequence = sequence;
    this.bytes = message.getSerializedSize();
    this.publishTime = publishTime;
  }

  String orderingKey() {
    return message.getOrderingKey();
  }
}
