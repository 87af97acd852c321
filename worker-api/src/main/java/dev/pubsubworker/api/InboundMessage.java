package dev.pubsubworker.api;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/** A received Pub/Sub message, as a handler sees it. Immutable. */
public final class InboundMessage {

  private final String messageId;
  // A read-only view; never handed out itself (only duplicates), so its position never moves.
  private final ByteBuffer data;
  private final Map<String, String> attributes;
  private final String orderingKey;
  private final Instant publishTime;
  private final int deliveryAttempt;

  /**
   * @param messageId Pub/Sub's message id
   * @param data the payload (copied)
   * @param attributes the attributes (copied)
   * @param orderingKey the ordering key, empty when none
   * @param publishTime when Pub/Sub accepted the publish
   * @param deliveryAttempt the delivery attempt (1 for the first), or 0 when Pub/Sub does not
   *     report it (it does only on subscriptions with a dead-letter policy)
   */
  public InboundMessage(
      String messageId,
      byte[] data,
      Map<String, String> attributes,
      String orderingKey,
      Instant publishTime,
      int deliveryAttempt) {
    this(
        messageId,
        ByteBuffer.wrap(data.clone()),
        Map.copyOf(attributes),
        orderingKey,
        publishTime,
        deliveryAttempt);
  }

  /**
   * A message over bytes and attributes the caller guarantees never to change (e.g. those of an
   * immutable protobuf message): neither is copied, so a handler that never asks for the payload as
   * an array costs no copy.
   *
   * @param messageId Pub/Sub's message id
   * @param data the payload: the buffer's remaining bytes, which must never change afterwards; the
   *     buffer itself is not modified (a read-only view of it is kept)
   * @param attributes the attributes, which must never change afterwards (kept behind an
   *     unmodifiable view)
   * @param orderingKey the ordering key, empty when none
   * @param publishTime when Pub/Sub accepted the publish
   * @param deliveryAttempt the delivery attempt (1 for the first), or 0 when unknown
   */
  public InboundMessage(
      String messageId,
      ByteBuffer data,
      Map<String, String> attributes,
      String orderingKey,
      Instant publishTime,
      int deliveryAttempt) {
    this.messageId = Objects.requireNonNull(messageId, "messageId");
    this.data = data.slice().asReadOnlyBuffer();
    this.attributes = Collections.unmodifiableMap(Objects.requireNonNull(attributes, "attributes"));
    this.orderingKey = Objects.requireNonNull(orderingKey, "orderingKey");
    this.publishTime = Objects.requireNonNull(publishTime, "publishTime");
    this.deliveryAttempt = deliveryAttempt;
  }

  /** Pub/Sub's message id: the same on every redelivery, new on every publish. */
  public String messageId() {
    return messageId;
  }

  /** The payload bytes (a fresh copy on every call). */
  public byte[] data() {
    byte[] copy = new byte[data.remaining()];
    data.duplicate().get(copy);
    return copy;
  }

  /** The payload as a read-only buffer (no copy), positioned at its first byte. */
  public ByteBuffer dataBuffer() {
    return data.duplicate();
  }

  /** The payload's length in bytes. */
  public int dataSize() {
    return data.remaining();
  }

  /** The payload decoded as UTF-8 (malformed bytes become U+FFFD). */
  public String dataAsUtf8() {
    return new String(data(), StandardCharsets.UTF_8);
  }

  /** The attributes, unmodifiable. */
  public Map<String, String> attributes() {
    return attributes;
  }

  /** One attribute, if present. */
  public Optional<String> attribute(String name) {
    return Optional.ofNullable(attributes.get(name));
  }

  /** The ordering key, empty when the message has none. */
  public String orderingKey() {
    return orderingKey;
  }

  /** When Pub/Sub accepted the publish. */
  public Instant publishTime() {
    return publishTime;
  }

  /**
   * The delivery attempt, 1 for the first; 0 when unknown (Pub/Sub reports it only on subscriptions
   * with a dead-letter policy).
   */
  public int deliveryAttempt() {
    return deliveryAttempt;
  }

  /** Identifies the message without its payload or attributes (which may hold business data). */
  @Override
  public String toString() {
    return "InboundMessage[id="
        + messageId
        + ", bytes="
        + data.remaining()
        + ", attempt="
        + deliveryAttempt
        + "]";
  }
}
