package dev.pubsubworker.api;

/**
 * Processes one Pub/Sub message; contributed by a plugin under a name ({@link Handlers#bind}) and
 * chosen per subscription with {@code handler = "name"}.
 *
 * <p>The runtime calls it under the subscription's guard: with {@code guard = lock} at most once
 * per key (a redelivery or republish is acknowledged without calling it), with {@code mutex} never
 * concurrently for one key. Its outcome decides the acknowledgement:
 *
 * <ul>
 *   <li>returns normally: the message is acked.
 *   <li>throws: the claim is released and the message nacked, so Pub/Sub redelivers it (and, with a
 *       dead-letter policy, eventually dead-letters it). The error is logged once.
 *   <li>throws {@link PoisonMessageException} (or a class the subscription lists in {@code
 *       poison-exceptions}), itself or as a cause: the message can never succeed. It is published
 *       to the dead-letter topic at once and acked, after this one attempt.
 * </ul>
 *
 * <p>Poison messages (a payload that can never be processed, such as one that does not parse)
 * should throw {@link PoisonMessageException}, so they are dead-lettered at once instead of
 * redelivered until the dead-letter policy takes them. Implementations must be thread-safe: one
 * instance serves all of a subscription's handler threads.
 */
@FunctionalInterface
public interface MessageHandler {

  /**
   * Handles one message.
   *
   * @param message the message
   * @param context the key, fencing token and lease state of its claim
   * @throws PoisonMessageException to have the message dead-lettered at once
   * @throws Exception to have the message redelivered
   */
  void handle(InboundMessage message, HandlerContext context) throws Exception;
}
