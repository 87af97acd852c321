package dev.pubsubworker.pubsub;

import com.google.cloud.pubsub.v1.Publisher;
import com.google.pubsub.v1.PubsubMessage;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * {@link DeadLetterPublisher#of(Publisher, Duration)}: dead letters through a {@link Publisher}.
 */
final class PublisherDeadLetterPublisher implements DeadLetterPublisher {

  /** Why a dead letter was not published. */
  static final class PublishFailedException extends Exception {
    private static final long serialVersionUID = 1L;

    PublishFailedException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  private final Publisher publisher;
  private final Duration timeout;

  PublisherDeadLetterPublisher(Publisher publisher, Duration timeout) {
    this.publisher = Objects.requireNonNull(publisher, "publisher");
    Objects.requireNonNull(timeout, "timeout");
    if (timeout.isZero() || timeout.isNegative()) {
      throw new IllegalArgumentException("timeout must be positive, but was " + timeout);
    }
    this.timeout = timeout;
  }

  @Override
  public String topic() {
    return publisher.getTopicNameString();
  }

  /**
   * Publishes and waits at most the timeout. A key paused by an earlier failed publish is resumed
   * first, so later dead letters with that key are published.
   *
   * @throws PublishFailedException if Pub/Sub refused it, it timed out, or the calling thread was
   *     interrupted (its interrupt flag is set again)
   */
  @Override
  public String publish(PubsubMessage letter) throws PublishFailedException {
    // A failed ordered publish pauses its key until resumed. The client marks the key only after it
    // failed the future, so resuming right after a failure can come too early: resume before each
    // publish as well. Dead letters need no order among themselves across a failure: the failed
    // one was nacked and comes back.
    resume(letter);
    try {
      return publisher.publish(letter).get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      resume(letter);
      Throwable cause = e.getCause() == null ? e : e.getCause();
      throw new PublishFailedException(cause.toString(), cause);
    } catch (TimeoutException e) {
      resume(letter);
      throw new PublishFailedException("timed out after " + timeout, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      resume(letter);
      throw new PublishFailedException("interrupted while publishing", e);
    } catch (RuntimeException e) {
      resume(letter);
      throw new PublishFailedException(e.toString(), e);
    }
  }

  private void resume(PubsubMessage letter) {
    if (!letter.getOrderingKey().isEmpty()) {
      publisher.resumePublish(letter.getOrderingKey());
    }
  }

  @Override
  public String toString() {
    return "DeadLetterPublisher[" + topic() + ", timeout " + timeout + "]";
  }
}
