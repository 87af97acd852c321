package dev.pubsubworker.runtime.pubsub;

import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import dev.pubsubworker.api.InboundMessage;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetEncoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Settles one subscription's terminal failures (SPEC §6): a message that can never succeed is
 * published to the dead-letter topic — its data, attributes and ordering key, plus the attributes
 * named by the {@code ATTR_*} constants (overwriting attributes of the same name) — and acked only
 * once Pub/Sub accepted that publish ({@link Outcome#DEAD_LETTERED}). A failed or timed-out publish
 * nacks the message with an ERROR ({@link Outcome#DEAD_LETTER_FAILED}); without a dead-letter topic
 * the message is nacked with an ERROR under the caller's outcome. ERROR lines are written once per
 * {@link GuardedDispatcher#REPEAT_INTERVAL} per kind. Thread-safe.
 */
final class DeadLetters {

  /** The subscription's full path the message came from. */
  static final String ATTR_SUBSCRIPTION = "pubsub-worker-subscription";

  /** The original message id. */
  static final String ATTR_MESSAGE_ID = "pubsub-worker-message-id";

  /** The original publish time, RFC 3339 in UTC. */
  static final String ATTR_PUBLISH_TIME = "pubsub-worker-publish-time";

  /**
   * The delivery attempt that failed; 0 when Pub/Sub does not report it (no dead-letter policy).
   */
  static final String ATTR_DELIVERY_ATTEMPT = "pubsub-worker-delivery-attempt";

  /** The terminal exception's class name, or {@code no-key} / {@code invalid-key}. */
  static final String ATTR_ERROR_CLASS = "pubsub-worker-error-class";

  /** The terminal exception's message (or why the key is missing), cut to fit. */
  static final String ATTR_ERROR_MESSAGE = "pubsub-worker-error-message";

  /** The worker that dead-lettered it ({@code worker-id}). */
  static final String ATTR_WORKER_ID = "pubsub-worker-worker-id";

  /** When it was dead-lettered, RFC 3339 in UTC. */
  static final String ATTR_DEAD_LETTERED_AT = "pubsub-worker-dead-lettered-at";

  /** Pub/Sub's limit on an attribute value, in UTF-8 bytes. */
  static final int MAX_ATTRIBUTE_BYTES = 1024;

  private static final Logger log = LoggerFactory.getLogger(DeadLetters.class);

  /**
   * A terminal failure of one delivery.
   *
   * @param errorClass the {@link #ATTR_ERROR_CLASS} value
   * @param errorMessage the {@link #ATTR_ERROR_MESSAGE} value (cut to fit when sent)
   * @param description what happened, for the log: "handler orders threw ..." or "has no key: ..."
   * @param withoutTopic the outcome (a nack) when there is no dead-letter topic
   * @param cause the exception, for the log's stack trace; null for a missing key
   */
  record Failure(
      String errorClass,
      String errorMessage,
      String description,
      Outcome withoutTopic,
      Throwable cause) {}

  private final String subscriptionId;
  private final String subscriptionPath;
  private final Optional<String> topic;
  private final String workerId;
  private final DeadLetterPublishers publishers;
  private final RepeatLimiter repeats;
  private final Clock clock;

  /**
   * @param subscriptionId the subscription's id in the config (logs)
   * @param subscriptionPath its full path ({@link #ATTR_SUBSCRIPTION})
   * @param topic the dead-letter topic's full path, empty for none
   * @param workerId {@link #ATTR_WORKER_ID}
   * @param publishers the worker's dead-letter publishers; unused without a topic (may be null)
   * @param repeats limits repeated ERROR lines
   * @param clock the clock of {@link #ATTR_DEAD_LETTERED_AT}
   */
  DeadLetters(
      String subscriptionId,
      String subscriptionPath,
      Optional<String> topic,
      String workerId,
      DeadLetterPublishers publishers,
      RepeatLimiter repeats,
      Clock clock) {
    this.subscriptionId = subscriptionId;
    this.subscriptionPath = subscriptionPath;
    this.topic = topic;
    this.workerId = workerId;
    this.publishers = publishers;
    this.repeats = repeats;
    this.clock = clock;
  }

  /** No dead-letter topic: every terminal failure is nacked with an ERROR. */
  static DeadLetters none(String subscriptionId, RepeatLimiter repeats) {
    return new DeadLetters(
        subscriptionId, subscriptionId, Optional.empty(), "", null, repeats, Clock.systemUTC());
  }

  /** The dead-letter topic, if any. */
  Optional<String> topic() {
    return topic;
  }

  /**
   * Dead-letters {@code message}: publishes it and returns {@link Outcome#DEAD_LETTERED} (ack), or
   * {@link Outcome#DEAD_LETTER_FAILED} (nack) if the publish failed; without a dead-letter topic
   * returns {@code failure.withoutTopic()}. Blocks the calling handler thread for the publish.
   */
  Outcome deadLetter(InboundMessage message, Failure failure) {
    if (topic.isEmpty()) {
      RepeatLimiter.Decision d = repeats.check("terminal-without-topic");
      String line =
          "message {} {}; it can never succeed, but subscription {} has no dead-letter topic, so it"
              + " is nacked and comes back (set dead-letter-topic, or give the subscription a"
              + " dead-letter policy), attempt {}{}";
      Object[] args = {
        message.messageId(),
        failure.description(),
        subscriptionId,
        attempt(message),
        d.suppressedNote(),
        failure.cause()
      };
      if (d.write()) {
        log.error(line, args);
      } else if (log.isDebugEnabled()) {
        log.debug(line, args);
      }
      return failure.withoutTopic();
    }
    String target = topic.get();
    PubsubMessage letter = letter(message, failure);
    try {
      String id = publishers.publish(target, letter);
      RepeatLimiter.Decision d = repeats.check("dead-lettered:" + failure.errorClass());
      String line =
          "message {} {}; dead-lettered after attempt {} to {} (as message {}) and acked{}";
      Object[] args = {
        message.messageId(),
        failure.description(),
        attempt(message),
        target,
        id,
        d.suppressedNote(),
        failure.cause()
      };
      if (d.write()) {
        log.warn(line, args);
      } else if (log.isDebugEnabled()) {
        log.debug(line, args);
      }
      return Outcome.DEAD_LETTERED;
    } catch (DeadLetterPublishers.PublishFailedException e) {
      RepeatLimiter.Decision d =
          repeats.check("dead-letter-failed:" + e.getCause().getClass().getName());
      String line =
          "message {} {}, but publishing it to the dead-letter topic {} failed ({}); nacked for"
              + " redelivery, attempt {}{}";
      Object[] args = {
        message.messageId(),
        failure.description(),
        target,
        e.getMessage(),
        attempt(message),
        d.suppressedNote(),
        e
      };
      if (d.write()) {
        log.error(line, args);
      } else if (log.isDebugEnabled()) {
        log.debug(line, args);
      }
      return Outcome.DEAD_LETTER_FAILED;
    }
  }

  /** The dead letter: the original's data, attributes and ordering key, plus ours. */
  PubsubMessage letter(InboundMessage message, Failure failure) {
    Map<String, String> added = new LinkedHashMap<>();
    added.put(ATTR_SUBSCRIPTION, subscriptionPath);
    added.put(ATTR_MESSAGE_ID, message.messageId());
    added.put(ATTR_PUBLISH_TIME, message.publishTime().toString());
    added.put(ATTR_DELIVERY_ATTEMPT, Integer.toString(message.deliveryAttempt()));
    added.put(ATTR_ERROR_CLASS, failure.errorClass());
    added.put(ATTR_ERROR_MESSAGE, failure.errorMessage() == null ? "" : failure.errorMessage());
    added.put(ATTR_WORKER_ID, workerId);
    added.put(ATTR_DEAD_LETTERED_AT, clock.instant().toString());
    PubsubMessage.Builder b =
        PubsubMessage.newBuilder()
            .setData(ByteString.copyFrom(message.dataBuffer()))
            .putAllAttributes(message.attributes())
            .setOrderingKey(message.orderingKey());
    added.forEach((k, v) -> b.putAttributes(k, truncateUtf8(v, MAX_ATTRIBUTE_BYTES)));
    return b.build();
  }

  /**
   * {@code text} cut to at most {@code maxBytes} UTF-8 bytes at a character boundary (never inside
   * a surrogate pair), with "..." at the end when cut; unpaired surrogates become '?'.
   */
  static String truncateUtf8(String text, int maxBytes) {
    CharsetEncoder encoder =
        StandardCharsets.UTF_8
            .newEncoder()
            .onMalformedInput(CodingErrorAction.REPLACE)
            .onUnmappableCharacter(CodingErrorAction.REPLACE);
    byte[] all = text.getBytes(StandardCharsets.UTF_8);
    if (all.length <= maxBytes && isWellFormed(text)) {
      return text;
    }
    if (all.length <= maxBytes) {
      return new String(all, StandardCharsets.UTF_8);
    }
    ByteBuffer out = ByteBuffer.allocate(maxBytes - 3);
    encoder.encode(CharBuffer.wrap(text), out, true);
    out.flip();
    return StandardCharsets.UTF_8.decode(out) + "...";
  }

  private static boolean isWellFormed(String text) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (Character.isHighSurrogate(c)) {
        if (i + 1 >= text.length() || !Character.isLowSurrogate(text.charAt(i + 1))) {
          return false;
        }
        i++;
      } else if (Character.isLowSurrogate(c)) {
        return false;
      }
    }
    return true;
  }

  /**
   * This process's worker id: {@code configured} unless empty, else the {@code HOSTNAME}
   * environment variable (the pod's name on Kubernetes), else the host's name, else {@code
   * unknown}.
   */
  static String workerId(String configured) {
    if (!configured.isEmpty()) {
      return configured;
    }
    String host = System.getenv("HOSTNAME");
    if (host != null && !host.isBlank()) {
      return truncateUtf8(host.strip(), 255);
    }
    try {
      return truncateUtf8(InetAddress.getLocalHost().getHostName(), 255);
    } catch (UnknownHostException | SecurityException e) {
      return "unknown";
    }
  }

  private static String attempt(InboundMessage message) {
    return message.deliveryAttempt() == 0
        ? "unknown (no dead-letter policy)"
        : Integer.toString(message.deliveryAttempt());
  }
}
