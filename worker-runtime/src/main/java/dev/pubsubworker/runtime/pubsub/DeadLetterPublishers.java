package dev.pubsubworker.runtime.pubsub;

import com.google.api.gax.retrying.RetrySettings;
import com.google.cloud.pubsub.v1.Publisher;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.TopicName;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's dead-letter publishers: one {@link Publisher} per dead-letter topic, created on the
 * first dead letter for it, with message ordering on (a dead letter keeps its ordering key) and
 * retries bounded by {@link #PUBLISH_TIMEOUT}. {@link #shutdown} flushes and stops them all; call
 * it after the handlers have finished. Thread-safe.
 */
final class DeadLetterPublishers {

  /**
   * The longest one dead-letter publish may take, retries included; past it the publish counts as
   * failed and the original message is nacked.
   */
  static final Duration PUBLISH_TIMEOUT = Duration.ofSeconds(30);

  /** Why a dead letter was not published. */
  static final class PublishFailedException extends Exception {
    private static final long serialVersionUID = 1L;

    PublishFailedException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  private static final Logger log = LoggerFactory.getLogger(DeadLetterPublishers.class);

  private final Function<String, Publisher> factory;
  private final Map<String, Publisher> publishers = new ConcurrentHashMap<>();
  private volatile boolean shutDown;

  /** Publishers on {@code connection}. */
  DeadLetterPublishers(PubSubConnection connection) {
    this(topic -> create(connection, topic));
  }

  /** Publishers made by {@code factory} (topic path to a started publisher). */
  DeadLetterPublishers(Function<String, Publisher> factory) {
    this.factory = factory;
  }

  private static Publisher create(PubSubConnection connection, String topic) {
    RetrySettings retries =
        RetrySettings.newBuilder()
            .setTotalTimeoutDuration(PUBLISH_TIMEOUT)
            .setInitialRetryDelayDuration(Duration.ofMillis(100))
            .setRetryDelayMultiplier(4)
            .setMaxRetryDelayDuration(Duration.ofSeconds(10))
            .setInitialRpcTimeoutDuration(Duration.ofSeconds(10))
            .setRpcTimeoutMultiplier(2)
            .setMaxRpcTimeoutDuration(PUBLISH_TIMEOUT)
            .build();
    try {
      return connection
          .publisher(TopicName.parse(topic))
          .setEnableMessageOrdering(true)
          .setRetrySettings(retries)
          .build();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create a publisher for " + topic, e);
    }
  }

  /**
   * Publishes {@code message} to {@code topic} and waits for Pub/Sub to accept it, at most {@link
   * #PUBLISH_TIMEOUT} (plus a second for the client's own timeout to fire). A key paused by an
   * earlier failed publish is resumed first, so later dead letters with that key are published.
   *
   * @return the dead letter's message id
   * @throws PublishFailedException if Pub/Sub refused it, it timed out, the publishers are shut
   *     down, or the calling thread was interrupted (its interrupt flag is set again)
   */
  String publish(String topic, PubsubMessage message) throws PublishFailedException {
    Publisher publisher;
    try {
      if (shutDown) {
        throw new IllegalStateException("the dead-letter publishers are shut down");
      }
      publisher = publishers.computeIfAbsent(topic, factory);
    } catch (RuntimeException e) {
      throw new PublishFailedException("no publisher for " + topic + ": " + e, e);
    }
    // A failed ordered publish pauses its key until resumed. The client marks the key only after it
    // failed the future, so resuming right after a failure can come too early: resume before each
    // publish as well. Dead letters need no order among themselves across a failure: the failed
    // one was nacked and comes back.
    resume(publisher, message);
    try {
      return publisher
          .publish(message)
          .get(PUBLISH_TIMEOUT.plusSeconds(1).toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      resume(publisher, message);
      Throwable cause = e.getCause() == null ? e : e.getCause();
      throw new PublishFailedException(cause.toString(), cause);
    } catch (TimeoutException e) {
      resume(publisher, message);
      throw new PublishFailedException("timed out after " + PUBLISH_TIMEOUT, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      resume(publisher, message);
      throw new PublishFailedException("interrupted while publishing", e);
    } catch (RuntimeException e) {
      resume(publisher, message);
      throw new PublishFailedException(e.toString(), e);
    }
  }

  private static void resume(Publisher publisher, PubsubMessage message) {
    if (!message.getOrderingKey().isEmpty()) {
      publisher.resumePublish(message.getOrderingKey());
    }
  }

  /** Flushes and stops every publisher, waiting at most {@code timeout} in all. Idempotent. */
  void shutdown(Duration timeout) {
    shutDown = true;
    long ends = System.nanoTime() + timeout.toNanos();
    for (Map.Entry<String, Publisher> e : publishers.entrySet()) {
      Publisher p = e.getValue();
      try {
        p.shutdown();
        long left = Math.max(0, ends - System.nanoTime());
        if (!p.awaitTermination(left, TimeUnit.NANOSECONDS)) {
          log.warn("the dead-letter publisher of {} did not stop within {}", e.getKey(), timeout);
        }
      } catch (InterruptedException ie) {
        Thread.currentThread().interrupt();
        return;
      } catch (RuntimeException re) {
        log.warn("the dead-letter publisher of {} failed to stop: {}", e.getKey(), re.toString());
      }
    }
    publishers.clear();
  }
}
