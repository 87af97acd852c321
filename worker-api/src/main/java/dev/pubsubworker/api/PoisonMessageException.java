package dev.pubsubworker.api;

/**
 * Thrown by a {@link MessageHandler} to say that this message can never succeed: the runtime
 * dead-letters it after one attempt and acks it. The runtime publishes the message (data,
 * attributes and ordering key, plus diagnostic attributes) to the subscription's dead-letter topic
 * (its dead-letter policy's topic, or the configured {@code dead-letter-topic}) and acks the
 * original only once that publish succeeded; if the publish fails, or the subscription has no
 * dead-letter topic at all, the message is nacked and an ERROR logged. The guard releases the
 * message's claim, so a corrected republish with the same key runs.
 *
 * <p>The runtime looks for this exception (and for the classes a subscription lists in {@code
 * poison-exceptions}) in the thrown exception and its cause chain, up to {@value #MAX_CAUSE_DEPTH}
 * causes deep: a framework that wraps it (say, in an {@code ExecutionException}) still dead-letters
 * the message.
 */
public class PoisonMessageException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /** How many causes deep the runtime looks for a terminal exception: {@value}. */
  public static final int MAX_CAUSE_DEPTH = 10;

  /**
   * @param message why the message can never succeed; it becomes the dead letter's {@code
   *     pubsub-worker-error-message} attribute, so keep payload data and secrets out of it
   */
  public PoisonMessageException(String message) {
    super(message);
  }

  /**
   * @param message why the message can never succeed (see {@link #PoisonMessageException(String)})
   * @param cause what made it so, for the log; may be null
   */
  public PoisonMessageException(String message, Throwable cause) {
    super(message, cause);
  }
}
