package dev.pubsubworker.runtime.pubsub;

/** A configured subscription does not exist or cannot be reached; the worker does not start. */
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
