package dev.pubsubworker.pubsub;

import com.google.cloud.pubsub.v1.Subscriber;
import com.google.pubsub.v1.PubsubMessage;
import dev.pubsubworker.api.InboundMessage;
import java.time.Instant;

/**
 * The handler's view of a received {@link PubsubMessage}, and how log lines name its attempt. The
 * one conversion the engine uses, public so that code that hands a message to the engine's keys
 * outside a delivery (a redrive's dry run) sees the message exactly as a handler would.
 */
public final class InboundMessages {

  private InboundMessages() {}

  /**
   * {@code m} as a handler sees it, without copying: a read-only view of the message's immutable
   * bytes and attribute map. The delivery attempt is 0 when Pub/Sub does not report it (it does
   * only on subscriptions with a dead-letter policy).
   */
  public static InboundMessage of(PubsubMessage m) {
    Integer attempt = Subscriber.getDeliveryAttempt(m);
    return new InboundMessage(
        m.getMessageId(),
        m.getData().asReadOnlyByteBuffer(),
        m.getAttributesMap(),
        m.getOrderingKey(),
        Instant.ofEpochSecond(m.getPublishTime().getSeconds(), m.getPublishTime().getNanos()),
        attempt == null ? 0 : attempt);
  }

  /** The message's delivery attempt as log lines show it. */
  static String attemptText(InboundMessage message) {
    return message.deliveryAttempt() == 0
        ? "unknown (no dead-letter policy)"
        : Integer.toString(message.deliveryAttempt());
  }
}
