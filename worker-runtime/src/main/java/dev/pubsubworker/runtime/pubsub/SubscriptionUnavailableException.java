package dev.pubsubworker.runtime.pubsub;

/**
 * A configured subscription does not exist or cannot be reached: at start-up (the worker does not
 * start), or while running (its streaming pull failed for good, and the worker stopped). The
 * command line reports it as one line, exit 3.
 */
public final class SubscriptionUnavailableException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /**
   * @param message which subscription and why, in one line
   * @param cause the client's error
   */
  public SubscriptionUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
