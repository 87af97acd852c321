package dev.pubsubworker.runtime.pubsub;

import com.google.cloud.pubsub.v1.AckReplyConsumer;
import com.google.cloud.pubsub.v1.AckReplyConsumerWithResponse;
import com.google.cloud.pubsub.v1.MessageReceiver;
import com.google.cloud.pubsub.v1.MessageReceiverWithAckResponse;
import com.google.pubsub.v1.PubsubMessage;
import dev.pubsubworker.pubsub.DeadLetterAttributes;
import dev.pubsubworker.pubsub.GuardedReceiver;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The receiver of a subscription's {@code redrive-subscription}: each message on it goes to the
 * subscription's own {@link GuardedReceiver}, as the message it was first delivered as ({@link
 * DeadLetterAttributes#original}): a dead letter's original id, publish time and attributes, so a
 * {@code message-id} key of a message that ran before is a duplicate and a business key is itself.
 * A message without dead-letter attributes (one republished by hand) goes as it is.
 *
 * <p>A letter that names another subscription as its source (ours, or Pub/Sub's forwarding) is
 * nacked with a WARN, never run: its handler is another one's. It comes back until the redrive
 * subscription's own dead-letter policy, if any, moves it on.
 */
final class RedriveReceiver implements MessageReceiverWithAckResponse {

  private static final Logger log = LoggerFactory.getLogger(RedriveReceiver.class);

  private final GuardedReceiver target;
  private final String subscriptionId;
  private final String ownPath;
  private final String redrivePath;
  private final String projectId;

  /**
   * @param target the subscription's receiver
   * @param subscriptionId the subscription's id in the config
   * @param ownPath the subscription's full path: the source a letter must name, if it names one
   * @param redrivePath the redrive subscription's full path, for log lines
   * @param projectId the worker's project, for a source Pub/Sub names by id
   */
  RedriveReceiver(
      GuardedReceiver target,
      String subscriptionId,
      String ownPath,
      String redrivePath,
      String projectId) {
    this.target = target;
    this.subscriptionId = subscriptionId;
    this.ownPath = ownPath;
    this.redrivePath = redrivePath;
    this.projectId = projectId;
  }

  @Override
  public void receiveMessage(PubsubMessage letter, AckReplyConsumerWithResponse consumer) {
    if (foreign(letter)) {
      consumer.nack();
      return;
    }
    target.receiveMessage(DeadLetterAttributes.original(letter), consumer);
  }

  /** The same for a subscription without exactly-once delivery. */
  MessageReceiver asMessageReceiver() {
    MessageReceiver plain = target.asMessageReceiver();
    return (PubsubMessage letter, AckReplyConsumer consumer) -> {
      if (foreign(letter)) {
        consumer.nack();
        return;
      }
      plain.receiveMessage(DeadLetterAttributes.original(letter), consumer);
    };
  }

  private boolean foreign(PubsubMessage letter) {
    Optional<String> source = sourceOf(letter, projectId);
    if (source.isPresent() && !source.get().equals(ownPath)) {
      log.warn(
          "subscription {}: message {} on its redrive subscription {} is a dead letter of {},"
              + " not of {}; nacked, not run",
          subscriptionId,
          letter.getMessageId(),
          redrivePath,
          source.get(),
          ownPath);
      return true;
    }
    return false;
  }

  /**
   * The subscription a dead letter names as its source, as a full path: ours ({@link
   * DeadLetterAttributes#SUBSCRIPTION}), else Pub/Sub's forwarding's ({@link
   * DeadLetterAttributes#SOURCE_SUBSCRIPTION} in {@link
   * DeadLetterAttributes#SOURCE_SUBSCRIPTION_PROJECT}, else in {@code projectId}); empty when it
   * names none.
   */
  static Optional<String> sourceOf(PubsubMessage letter, String projectId) {
    String ours = letter.getAttributesOrDefault(DeadLetterAttributes.SUBSCRIPTION, "");
    if (ours.startsWith("projects/")) {
      return Optional.of(ours);
    }
    String id = letter.getAttributesOrDefault(DeadLetterAttributes.SOURCE_SUBSCRIPTION, "");
    if (id.isEmpty()) {
      return Optional.empty();
    }
    String project =
        letter.getAttributesOrDefault(DeadLetterAttributes.SOURCE_SUBSCRIPTION_PROJECT, projectId);
    return Optional.of(SubscriptionProbe.path(project, id));
  }
}
