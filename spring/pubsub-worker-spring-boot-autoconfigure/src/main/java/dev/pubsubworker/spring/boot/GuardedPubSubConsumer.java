package dev.pubsubworker.spring.boot;

import com.google.cloud.pubsub.v1.AckReplyConsumer;
import com.google.cloud.pubsub.v1.MessageReceiver;
import com.google.cloud.spring.pubsub.core.subscriber.PubSubSubscriberOperations;
import com.google.cloud.spring.pubsub.support.BasicAcknowledgeablePubsubMessage;
import dev.pubsubworker.pubsub.GuardedReceiver;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code Consumer<BasicAcknowledgeablePubsubMessage>} that Spring Cloud GCP's {@link
 * PubSubSubscriberOperations#subscribe(String, Consumer) PubSubTemplate.subscribe} takes, running
 * each message through a {@link GuardedReceiver}: the engine acks or nacks the message itself, by
 * its outcome table (a duplicate acked unrun, a held key parked, a terminal failure dead-lettered
 * then acked, any other failure nacked). Do not ack or nack the message elsewhere.
 *
 * <pre>{@code
 * pubSubTemplate.subscribe("orders-sub", guardedSubscriptions.consumer("orders", handler));
 * }</pre>
 *
 * <p><b>Parking.</b> A delivery whose key is held returns from {@link #accept} without an ack or a
 * nack; the streaming {@code Subscriber} under {@code PubSubTemplate.subscribe} keeps it
 * outstanding and extends its ack deadline (up to its max-ack-extension-period) until the engine
 * settles it. That holds for every message Spring Cloud GCP pushes from a {@code Subscriber} (the
 * {@code subscribe} methods and the inbound channel adapter); a message from a synchronous {@code
 * pull} has no deadline extension, so give such a receiver {@code inProgressMaxWait} zero.
 *
 * <p><b>Ack responses.</b> Spring Cloud GCP's message reports an ack as done once handed to the
 * client, without Pub/Sub's {@code AckResponse}, so the exactly-once checks of the engine's {@code
 * MessageReceiverWithAckResponse} form do not apply here; on an exactly-once subscription an ack
 * that Pub/Sub refuses still leaves the key DONE, and the redelivery is acked as a duplicate.
 *
 * <p>Thread-safe.
 */
public final class GuardedPubSubConsumer implements Consumer<BasicAcknowledgeablePubsubMessage> {

  private static final Logger log = LoggerFactory.getLogger(GuardedPubSubConsumer.class);

  private final GuardedReceiver receiver;
  private final MessageReceiver messages;

  private GuardedPubSubConsumer(GuardedReceiver receiver) {
    this.receiver = receiver;
    this.messages = receiver.asMessageReceiver();
  }

  /**
   * A consumer that runs every message through {@code receiver}. The receiver stays the caller's:
   * stop and close it after the subscriber (the auto-configuration's {@link GuardedSubscriptions}
   * does that for the receivers it builds).
   */
  public static GuardedPubSubConsumer of(GuardedReceiver receiver) {
    return new GuardedPubSubConsumer(Objects.requireNonNull(receiver, "receiver"));
  }

  /** Dispatches {@code message} to the receiver; returns before a parked message is settled. */
  @Override
  public void accept(BasicAcknowledgeablePubsubMessage message) {
    messages.receiveMessage(message.getPubsubMessage(), new Reply(message));
  }

  /** The receiver messages run through. */
  public GuardedReceiver receiver() {
    return receiver;
  }

  /** The receiver's subscription name (its id). */
  public String subscription() {
    return receiver.subscription();
  }

  @Override
  public String toString() {
    return "GuardedPubSubConsumer[" + receiver.subscription() + "]";
  }

  /** Settles one message through Spring Cloud GCP's ack and nack. */
  private static final class Reply implements AckReplyConsumer {
    private final BasicAcknowledgeablePubsubMessage message;

    Reply(BasicAcknowledgeablePubsubMessage message) {
      this.message = message;
    }

    @Override
    public void ack() {
      CompletableFuture<?> unused =
          message
              .ack()
              .whenComplete(
                  (done, failure) -> {
                    if (failure != null) {
                      // A pushed message's ack only fails if the client refused it; a pulled one's
                      // if
                      // its ack id expired. Either way Pub/Sub redelivers, and the key decides.
                      log.warn(
                          "ack of message {} failed: {}",
                          message.getPubsubMessage().getMessageId(),
                          failure.toString());
                    }
                  });
    }

    @Override
    public void nack() {
      CompletableFuture<?> unused =
          message
              .nack()
              .whenComplete(
                  (done, failure) -> {
                    if (failure != null) {
                      log.debug(
                          "nack of message {} failed (it comes back when its deadline lapses): {}",
                          message.getPubsubMessage().getMessageId(),
                          failure.toString());
                    }
                  });
    }
  }
}
