package dev.pubsubworker.pubsub;

import com.google.protobuf.Timestamp;
import com.google.pubsub.v1.PubsubMessage;
import dev.pubsubworker.api.InboundMessage;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.Set;

/**
 * The attributes a {@link GuardedReceiver} adds to a dead letter (overwriting attributes of the
 * same name on the original), so that whoever reads the dead-letter topic knows where the message
 * came from and why it failed. Values longer than {@link #MAX_VALUE_BYTES} UTF-8 bytes are cut (at
 * a character boundary, ending in "...").
 *
 * <p>Besides its own {@code pubsub-worker-*} attributes, a dead letter carries those of Pub/Sub's
 * own dead-letter forwarding that mean the same ({@code CloudPubSubDeadLetterSource*}), so tools
 * written for forwarded messages read ours too; each only when the receiver truly knows it (see
 * each constant). Attributes the client library adds on receipt ({@value #CLIENT_PREFIX}{@code *},
 * such as the delivery attempt) are not copied into the dead letter.
 */
public final class DeadLetterAttributes {

  /** The subscription's full path the message came from ({@code subscriptionPath}). */
  public static final String SUBSCRIPTION = "pubsub-worker-subscription";

  /**
   * The original message id. A message that carries it outside a dead letter (one {@code redrive
   * --republish} published back to its topic) is keyed on it: a {@code message-id} key resolves to
   * this id instead of the message's own ({@link #keyMessageId}), so the republished message is the
   * same piece of work as the one first published.
   */
  public static final String MESSAGE_ID = "pubsub-worker-message-id";

  /** The original publish time, RFC 3339 in UTC (on a republished message too). */
  public static final String PUBLISH_TIME = "pubsub-worker-publish-time";

  /**
   * The delivery attempt that failed; 0 when Pub/Sub does not report it (no dead-letter policy).
   */
  public static final String DELIVERY_ATTEMPT = "pubsub-worker-delivery-attempt";

  /** The terminal exception's class name, or {@code no-key} / {@code invalid-key}. */
  public static final String ERROR_CLASS = "pubsub-worker-error-class";

  /** The terminal exception's message (or why the key is missing), cut to fit. */
  public static final String ERROR_MESSAGE = "pubsub-worker-error-message";

  /** The worker that dead-lettered it ({@code workerId}). */
  public static final String WORKER_ID = "pubsub-worker-worker-id";

  /** When it was dead-lettered, RFC 3339 in UTC. */
  public static final String DEAD_LETTERED_AT = "pubsub-worker-dead-lettered-at";

  /**
   * Pub/Sub's name for the source subscription's id ({@code S} of {@code
   * projects/P/subscriptions/S}); set only when the receiver knows the full path.
   */
  public static final String SOURCE_SUBSCRIPTION = "CloudPubSubDeadLetterSourceSubscription";

  /**
   * Pub/Sub's name for the source subscription's project ({@code P}); set only when the receiver
   * knows the full path.
   */
  public static final String SOURCE_SUBSCRIPTION_PROJECT =
      "CloudPubSubDeadLetterSourceSubscriptionProject";

  /**
   * Pub/Sub's name for the number of delivery attempts; set only when Pub/Sub reported the attempt
   * (a subscription with a dead-letter policy), as {@link #DELIVERY_ATTEMPT}.
   */
  public static final String SOURCE_DELIVERY_COUNT = "CloudPubSubDeadLetterSourceDeliveryCount";

  /** Pub/Sub's name for the original publish time, RFC 3339 in UTC, as {@link #PUBLISH_TIME}. */
  public static final String SOURCE_TOPIC_PUBLISH_TIME =
      "CloudPubSubDeadLetterSourceTopicPublishTime";

  /**
   * The prefix of attributes the client library adds to a message on receipt ({@code
   * googclient_deliveryattempt}): never copied into a dead letter.
   */
  public static final String CLIENT_PREFIX = "googclient_";

  /** Pub/Sub's limit on an attribute value, in UTF-8 bytes: {@value}. */
  public static final int MAX_VALUE_BYTES = 1024;

  /** Every {@code pubsub-worker-*} attribute a dead letter gets. */
  private static final Set<String> OURS =
      Set.of(
          SUBSCRIPTION,
          MESSAGE_ID,
          PUBLISH_TIME,
          DELIVERY_ATTEMPT,
          ERROR_CLASS,
          ERROR_MESSAGE,
          WORKER_ID,
          DEAD_LETTERED_AT);

  /** The prefix of the attributes Pub/Sub's own dead-letter forwarding adds. */
  private static final String PUBSUB_PREFIX = "CloudPubSubDeadLetter";

  private DeadLetterAttributes() {}

  /**
   * The original message's id a dead letter carries ({@link #MESSAGE_ID}); empty for a letter
   * without it, such as one Pub/Sub's own dead-letter forwarding published (which gives the
   * forwarded message a new id and keeps the original's nowhere).
   */
  public static Optional<String> originalMessageId(PubsubMessage letter) {
    String id = letter.getAttributesOrDefault(MESSAGE_ID, "");
    return id.isEmpty() ? Optional.empty() : Optional.of(id);
  }

  /**
   * The message id a {@code message-id} key uses for {@code message}: the original id it carries in
   * {@link #MESSAGE_ID} (a message {@code redrive --republish} published again), else its own. Dead
   * letters carry the attribute too, so a dead letter of a republished message names the first
   * message's id, and a chain of republishes keeps one key.
   */
  public static String keyMessageId(InboundMessage message) {
    return message.attribute(MESSAGE_ID).filter(id -> !id.isEmpty()).orElse(message.messageId());
  }

  /**
   * The message as it was first delivered, rebuilt from a dead letter, for processing it again as
   * its subscription would (a redrive): the data and ordering key; the attributes without the
   * dead-letter attributes (ours, Pub/Sub's {@code CloudPubSubDeadLetter*} and the client's {@value
   * #CLIENT_PREFIX}{@code *}); the message id from {@link #MESSAGE_ID}, else the letter's own; the
   * publish time from {@link #PUBLISH_TIME}, else {@link #SOURCE_TOPIC_PUBLISH_TIME}, else the
   * letter's own. An attribute of the original that a dead-letter attribute overwrote is not
   * restored.
   */
  public static PubsubMessage original(PubsubMessage letter) {
    PubsubMessage.Builder b =
        PubsubMessage.newBuilder()
            .setData(letter.getData())
            .setOrderingKey(letter.getOrderingKey())
            .setMessageId(originalMessageId(letter).orElse(letter.getMessageId()))
            .setPublishTime(
                time(letter.getAttributesOrDefault(PUBLISH_TIME, ""))
                    .or(() -> time(letter.getAttributesOrDefault(SOURCE_TOPIC_PUBLISH_TIME, "")))
                    .orElse(letter.getPublishTime()));
    letter
        .getAttributesMap()
        .forEach(
            (k, v) -> {
              if (!OURS.contains(k)
                  && !k.startsWith(PUBSUB_PREFIX)
                  && !k.startsWith(CLIENT_PREFIX)) {
                b.putAttributes(k, v);
              }
            });
    return b.build();
  }

  private static Optional<Timestamp> time(String text) {
    if (text.isEmpty()) {
      return Optional.empty();
    }
    Instant t;
    try {
      t = OffsetDateTime.parse(text).toInstant();
    } catch (DateTimeParseException e) {
      return Optional.empty();
    }
    return Optional.of(
        Timestamp.newBuilder().setSeconds(t.getEpochSecond()).setNanos(t.getNano()).build());
  }
}
