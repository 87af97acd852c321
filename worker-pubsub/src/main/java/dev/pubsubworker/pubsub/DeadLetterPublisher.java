package dev.pubsubworker.pubsub;

import com.google.cloud.pubsub.v1.Publisher;
import com.google.pubsub.v1.PubsubMessage;
import java.time.Duration;

/**
 * Where a {@link GuardedReceiver} publishes the messages that can never succeed (terminal
 * failures): one dead-letter topic. The receiver acks the original only once {@link #publish}
 * returned, and nacks it (outcome {@link Outcome#DEAD_LETTER_FAILED}) if it threw, so nothing is
 * lost either way.
 *
 * <p>{@link #of(Publisher)} is the implementation over a google-cloud-pubsub {@link Publisher}.
 * Implementations must be thread-safe: several handler threads publish at once.
 */
public interface DeadLetterPublisher {

  /** How long {@link #of(Publisher)}'s publisher waits for Pub/Sub to accept a letter: 30 s. */
  Duration DEFAULT_PUBLISH_TIMEOUT = Duration.ofSeconds(30);

  /** The dead-letter topic, {@code projects/P/topics/T}, as log lines name it. */
  String topic();

  /**
   * Publishes {@code letter} and waits until Pub/Sub accepted it, on the calling handler thread.
   * The wait must be bounded: the delivery stays outstanding (and its handler thread busy) until
   * this returns or throws.
   *
   * @param letter the dead letter: the original's data, attributes and ordering key, plus the
   *     {@link DeadLetterAttributes}
   * @return the dead letter's message id; empty from an implementation that keeps the letter itself
   *     instead of publishing it (a redrive tool, which leaves it where it came from): the outcome
   *     is still {@link Outcome#DEAD_LETTERED}, and the log line says "kept by {@link #topic()},
   *     not published" instead of naming a message id
   * @throws Exception if the letter was not published (refused, timed out, interrupted): the
   *     original is nacked and comes back
   */
  String publish(PubsubMessage letter) throws Exception;

  /**
   * Dead letters published by {@code publisher}, each waited for at most {@link
   * #DEFAULT_PUBLISH_TIMEOUT}. See {@link #of(Publisher, Duration)}.
   */
  static DeadLetterPublisher of(Publisher publisher) {
    return of(publisher, DEFAULT_PUBLISH_TIMEOUT);
  }

  /**
   * Dead letters published by {@code publisher}, each waited for at most {@code timeout}. A letter
   * keeps the original's ordering key, so build the publisher with {@code
   * setEnableMessageOrdering(true)} (a publisher without it refuses such letters, and they are
   * nacked); a key that an earlier failed publish paused is resumed before each publish, so one
   * failure does not block every later letter of that key. Give the publisher retry settings whose
   * total timeout is at most {@code timeout}. The publisher stays the caller's: shut it down after
   * the receiver's stop.
   *
   * @throws IllegalArgumentException if {@code timeout} is not positive
   */
  static DeadLetterPublisher of(Publisher publisher, Duration timeout) {
    return new PublisherDeadLetterPublisher(publisher, timeout);
  }
}
