package dev.pubsubworker.pubsub;

import com.google.cloud.pubsub.v1.Publisher;
import com.google.cloud.pubsub.v1.Subscriber;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.LockBackend;
import java.time.Duration;

/**
 * The root README's "Exactly-once for your own Subscriber" block, compiled: the lines between the
 * markers are the README's block, character for character after the indentation ({@code
 * ReadmeExampleTest} compares them). {@code SubscriberEndToEndTest} runs the same calls on the
 * embedded server.
 */
final class ReadmeExample {

  private ReadmeExample() {}

  static void run(
      LockBackend backend,
      MessageHandler handler,
      Publisher deadLetterPublisher,
      String subscriptionPath) {
    // README begin
    IdempotencyGuard guard = IdempotencyGuard.newBuilder(backend).build(); // any lock store
    GuardedReceiver receiver =
        GuardedReceiver.newBuilder("orders", handler) // your MessageHandler
            .guard(guard) // lock: the handler runs at most once per key
            .key(MessageKey.attribute("order_id").withNamespace("orders"))
            .deadLetters(DeadLetterPublisher.of(deadLetterPublisher)) // poison and unkeyed
            .build();
    Subscriber subscriber = Subscriber.newBuilder(subscriptionPath, receiver).build();
    subscriber.startAsync().awaitRunning();
    // ... and at shutdown:
    receiver.beginStop(); // nothing new starts
    subscriber.stopAsync();
    receiver.stop(Duration.ofSeconds(30)); // waiting ones nacked, running ones get 30 s
    subscriber.awaitTerminated();
    receiver.close();
    guard.close();
    // README end
  }
}
