package dev.pubsubworker.pubsub;

import com.google.protobuf.ByteString;
import com.google.pubsub.v1.ProjectSubscriptionName;
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
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Settles one receiver's terminal failures: a message that can never succeed is published to the
 * dead-letter topic — its data, attributes and ordering key, plus the {@link DeadLetterAttributes}
 * (overwriting attributes of the same name) — and acked only once Pub/Sub accepted that publish
 * ({@link Outcome#DEAD_LETTERED}). A failed or timed-out publish nacks the message with an ERROR
 * ({@link Outcome#DEAD_LETTER_FAILED}); without a dead-letter publisher the message is nacked with
 * an ERROR under the caller's outcome. ERROR lines are written once per {@link
 * GuardedReceiver#REPEAT_INTERVAL} per kind. Thread-safe.
 */
final class DeadLetters {

  private static final Logger log = LoggerFactory.getLogger(DeadLetters.class);

  /**
   * A terminal failure of one delivery.
   *
   * @param errorClass the {@link DeadLetterAttributes#ERROR_CLASS} value
   * @param errorMessage the {@link DeadLetterAttributes#ERROR_MESSAGE} value (cut to fit when
   *     sent); null for none
   * @param description what happened, for the log: "failed in handler ..." or "has no key: ..."
   * @param withoutTopic the outcome (a nack) when there is no dead-letter publisher
   * @param cause the exception, for the log's stack trace; null for a missing key
   */
  record Failure(
      String errorClass,
      @Nullable String errorMessage,
      String description,
      Outcome withoutTopic,
      @Nullable Throwable cause) {}

  private final String subscription;
  private final String subscriptionPath;
  private final @Nullable DeadLetterPublisher publisher;
  private final String workerId;
  private final RepeatLimiter repeats;
  private final Clock clock;

  /**
   * @param subscription the receiver's subscription name (logs)
   * @param subscriptionPath its full path ({@link DeadLetterAttributes#SUBSCRIPTION})
   * @param publisher the dead-letter topic's publisher, null for none
   * @param workerId {@link DeadLetterAttributes#WORKER_ID}
   * @param repeats limits repeated ERROR lines
   * @param clock the clock of {@link DeadLetterAttributes#DEAD_LETTERED_AT}
   */
  DeadLetters(
      String subscription,
      String subscriptionPath,
      @Nullable DeadLetterPublisher publisher,
      String workerId,
      RepeatLimiter repeats,
      Clock clock) {
    this.subscription = subscription;
    this.subscriptionPath = subscriptionPath;
    this.publisher = publisher;
    this.workerId = workerId;
    this.repeats = repeats;
    this.clock = clock;
  }

  /**
   * Dead-letters {@code message}: publishes it and returns {@link Outcome#DEAD_LETTERED} (ack), or
   * {@link Outcome#DEAD_LETTER_FAILED} (nack) if the publish failed; without a dead-letter
   * publisher returns {@code failure.withoutTopic()}. Blocks the calling handler thread for the
   * publish.
   */
  Outcome deadLetter(InboundMessage message, Failure failure) {
    DeadLetterPublisher target = publisher;
    if (target == null) {
      RepeatLimiter.Decision d = repeats.check("terminal-without-topic");
      String line =
          "message {} {}; it can never succeed, but subscription {} has no dead-letter topic, so it"
              + " is nacked and comes back (set a dead-letter topic, or give the subscription a"
              + " dead-letter policy), attempt {}{}";
      Object[] args = {
        message.messageId(),
        failure.description(),
        subscription,
        InboundMessages.attemptText(message),
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
    PubsubMessage letter = letter(message, failure);
    try {
      String id = target.publish(letter);
      RepeatLimiter.Decision d = repeats.check("dead-lettered:" + failure.errorClass());
      boolean kept = id.isEmpty(); // not published: topic() says by what and where
      String line = "message {} {}; {} after attempt {} {}{}";
      Object[] args = {
        message.messageId(),
        failure.description(),
        kept ? "kept" : "dead-lettered",
        InboundMessages.attemptText(message),
        kept
            ? "by " + target.topic() + ", not published"
            : "to " + target.topic() + " (as message " + id + ") and acked",
        d.suppressedNote(),
        failure.cause()
      };
      if (d.write()) {
        log.warn(line, args);
      } else if (log.isDebugEnabled()) {
        log.debug(line, args);
      }
      return Outcome.DEAD_LETTERED;
    } catch (Exception e) {
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      Throwable cause = e.getCause() == null ? e : e.getCause();
      RepeatLimiter.Decision d = repeats.check("dead-letter-failed:" + cause.getClass().getName());
      String line =
          "message {} {}, but publishing it to the dead-letter topic {} failed ({}); nacked for"
              + " redelivery, attempt {}{}";
      Object[] args = {
        message.messageId(),
        failure.description(),
        target.topic(),
        e.getMessage() == null ? e.toString() : e.getMessage(),
        InboundMessages.attemptText(message),
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

  /**
   * The dead letter: the original's data, attributes (without the client library's {@code
   * googclient_*}) and ordering key, plus ours and Pub/Sub's forwarding names we know.
   */
  PubsubMessage letter(InboundMessage message, Failure failure) {
    Map<String, String> added = new LinkedHashMap<>();
    added.put(DeadLetterAttributes.SUBSCRIPTION, subscriptionPath);
    // A republished message's dead letter names the first message, whose id its key used.
    added.put(DeadLetterAttributes.MESSAGE_ID, DeadLetterAttributes.keyMessageId(message));
    String publishTime =
        message
            .attribute(DeadLetterAttributes.PUBLISH_TIME)
            .filter(t -> !t.isEmpty())
            .orElse(message.publishTime().toString());
    added.put(DeadLetterAttributes.PUBLISH_TIME, publishTime);
    added.put(DeadLetterAttributes.DELIVERY_ATTEMPT, Integer.toString(message.deliveryAttempt()));
    added.put(DeadLetterAttributes.ERROR_CLASS, failure.errorClass());
    String errorMessage = failure.errorMessage();
    added.put(DeadLetterAttributes.ERROR_MESSAGE, errorMessage == null ? "" : errorMessage);
    added.put(DeadLetterAttributes.WORKER_ID, workerId);
    added.put(DeadLetterAttributes.DEAD_LETTERED_AT, clock.instant().toString());
    // Pub/Sub's own forwarding names, for what this receiver truly knows.
    if (ProjectSubscriptionName.isParsableFrom(subscriptionPath)) {
      ProjectSubscriptionName path = ProjectSubscriptionName.parse(subscriptionPath);
      added.put(DeadLetterAttributes.SOURCE_SUBSCRIPTION, path.getSubscription());
      added.put(DeadLetterAttributes.SOURCE_SUBSCRIPTION_PROJECT, path.getProject());
    }
    if (message.deliveryAttempt() > 0) {
      added.put(
          DeadLetterAttributes.SOURCE_DELIVERY_COUNT, Integer.toString(message.deliveryAttempt()));
    }
    added.put(DeadLetterAttributes.SOURCE_TOPIC_PUBLISH_TIME, publishTime);
    PubsubMessage.Builder b =
        PubsubMessage.newBuilder()
            .setData(ByteString.copyFrom(message.dataBuffer()))
            .setOrderingKey(message.orderingKey());
    message
        .attributes()
        .forEach(
            (k, v) -> {
              if (!k.startsWith(DeadLetterAttributes.CLIENT_PREFIX)) {
                b.putAttributes(k, v);
              }
            });
    added.forEach(
        (k, v) -> b.putAttributes(k, truncateUtf8(v, DeadLetterAttributes.MAX_VALUE_BYTES)));
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
}
