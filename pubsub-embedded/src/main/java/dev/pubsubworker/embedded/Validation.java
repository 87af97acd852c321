package dev.pubsubworker.embedded;

import com.google.pubsub.v1.PubsubMessage;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

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

  /** Most messages in one publish request. */
  static final int MAX_MESSAGES_PER_PUBLISH = 1000;

  /** Most attributes on one message. */
  static final int MAX_ATTRIBUTES = 100;

  /** Longest attribute key, UTF-8 bytes. */
  static final int MAX_ATTRIBUTE_KEY_BYTES = 256;

  /** Longest attribute value, UTF-8 bytes. */
  static final int MAX_ATTRIBUTE_VALUE_BYTES = 1024;

  /** Longest ordering key, UTF-8 bytes. */
  static final int MAX_ORDERING_KEY_BYTES = 1024;

  /** Attribute keys starting with this are Google's, except {@link #CLIENT_ATTRIBUTE_PREFIX}. */
  static final String RESERVED_ATTRIBUTE_PREFIX = "goog";

  /** The client libraries' own attributes (trace context, schema details): allowed. */
  static final String CLIENT_ATTRIBUTE_PREFIX = "googclient_";

  /** Bounds of message_retention_duration, on subscriptions and on topics. */
  static final Duration MIN_RETENTION = Duration.ofMinutes(10);

  static final Duration MAX_RETENTION = Duration.ofDays(31);

  /** Default retention of a subscription. */
  static final Duration DEFAULT_RETENTION = Duration.ofDays(7);

  /** Shortest expiration_policy.ttl. */
  static final Duration MIN_EXPIRATION_TTL = Duration.ofDays(1);

  private Validation() {}

  static StatusRuntimeException invalid(String message) {
    return Status.INVALID_ARGUMENT.withDescription(message).asRuntimeException();
  }

  /**
   * Checks a publish request against Pub/Sub's limits: 1 to 1,000 messages, each with data or an
   * attribute, at most 100 attributes with keys of at most 256 bytes (none starting with {@code
   * goog} but for {@code googclient_}) and values of at most 1,024 bytes, an ordering key of at
   * most 1,024 bytes, and 10 MB in all.
   *
   * @throws StatusRuntimeException INVALID_ARGUMENT naming the limit and the value that broke it
   */
  static void checkPublish(List<PubsubMessage> messages) {
    if (messages.isEmpty()) {
      throw invalid("A publish request must contain at least one message");
    }
    if (messages.size() > MAX_MESSAGES_PER_PUBLISH) {
      // The emulator's wording.
      throw invalid(
          "Too many messages to publish: at most "
              + MAX_MESSAGES_PER_PUBLISH
              + " in one request, but there were "
              + messages.size());
    }
    long size = 0;
    for (PubsubMessage message : messages) {
      if (message.getData().isEmpty() && message.getAttributesCount() == 0) {
        // The emulator's wording; Pub/Sub wants non-empty data or at least one attribute.
        throw invalid("Some messages are empty");
      }
      checkAttributes(message.getAttributesMap());
      int orderingKeyBytes = utf8Length(message.getOrderingKey());
      if (orderingKeyBytes > MAX_ORDERING_KEY_BYTES) {
        throw invalid(
            "An ordering key must be at most "
                + MAX_ORDERING_KEY_BYTES
                + " bytes, but one is "
                + orderingKeyBytes
                + " bytes");
      }
      size += message.getSerializedSize();
    }
    if (size > MAX_PUBLISH_REQUEST_BYTES) {
      throw invalid(
          "Request payload size exceeds the limit: " + MAX_PUBLISH_REQUEST_BYTES + " bytes.");
    }
  }

  private static void checkAttributes(Map<String, String> attributes) {
    if (attributes.size() > MAX_ATTRIBUTES) {
      throw invalid(
          "A message may have at most "
              + MAX_ATTRIBUTES
              + " attributes, but one has "
              + attributes.size());
    }
    for (Map.Entry<String, String> attribute : attributes.entrySet()) {
      String key = attribute.getKey();
      int keyBytes = utf8Length(key);
      if (keyBytes > MAX_ATTRIBUTE_KEY_BYTES) {
        throw invalid(
            "An attribute key must be at most "
                + MAX_ATTRIBUTE_KEY_BYTES
                + " bytes, but one is "
                + keyBytes
                + " bytes (key="
                + abbreviate(key)
                + ")");
      }
      if (key.startsWith(RESERVED_ATTRIBUTE_PREFIX) && !key.startsWith(CLIENT_ATTRIBUTE_PREFIX)) {
        throw invalid(
            "Attribute keys starting with \"goog\" are reserved (only \"googclient_\" may be"
                + " used), but one is "
                + abbreviate(key));
      }
      int valueBytes = utf8Length(attribute.getValue());
      if (valueBytes > MAX_ATTRIBUTE_VALUE_BYTES) {
        throw invalid(
            "An attribute value must be at most "
                + MAX_ATTRIBUTE_VALUE_BYTES
                + " bytes, but the value of "
                + abbreviate(key)
                + " is "
                + valueBytes
                + " bytes");
      }
    }
  }

  /**
   * Checks a message_retention_duration (of a subscription or a topic) against 10 minutes to 31
   * days.
   *
   * @throws StatusRuntimeException INVALID_ARGUMENT "message_retention_duration out of bounds: ..."
   *     (the emulator's first words, then the bounds and the value)
   */
  static void checkRetention(com.google.protobuf.Duration retention) {
    Duration value = toDuration(retention);
    if (value.compareTo(MIN_RETENTION) < 0 || value.compareTo(MAX_RETENTION) > 0) {
      throw invalid(
          "message_retention_duration out of bounds: must be between 10 minutes and 31 days"
              + " (600s to 2678400s), but was "
              + format(retention));
    }
  }

  /**
   * Checks an expiration_policy.ttl: at least 1 day.
   *
   * @throws StatusRuntimeException INVALID_ARGUMENT naming the bound and the value
   */
  static void checkExpirationTtl(com.google.protobuf.Duration ttl) {
    if (toDuration(ttl).compareTo(MIN_EXPIRATION_TTL) < 0) {
      throw invalid(
          "expiration_policy.ttl out of bounds: must be at least 1 day (86400s), but was "
              + format(ttl));
    }
  }

  static Duration toDuration(com.google.protobuf.Duration duration) {
    return Duration.ofSeconds(duration.getSeconds(), duration.getNanos());
  }

  static com.google.protobuf.Duration toProto(Duration duration) {
    return com.google.protobuf.Duration.newBuilder()
        .setSeconds(duration.getSeconds())
        .setNanos(duration.getNano())
        .build();
  }

  /** "60s", "0.5s": a duration as the API's JSON form writes it. */
  private static String format(com.google.protobuf.Duration duration) {
    if (duration.getNanos() == 0) {
      return duration.getSeconds() + "s";
    }
    return toDuration(duration).toMillis() / 1000.0 + "s";
  }

  private static int utf8Length(String text) {
    return text.getBytes(StandardCharsets.UTF_8).length;
  }

  /** At most the first 32 characters, so that an error never carries a long value. */
  private static String abbreviate(String text) {
    return text.length() <= 32 ? text : text.substring(0, 32) + "…";
  }
}
