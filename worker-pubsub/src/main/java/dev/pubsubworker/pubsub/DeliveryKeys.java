package dev.pubsubworker.pubsub;

import dev.pubsubworker.api.InboundMessage;
import dev.pubsubworker.core.LockBackend;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A delivery's keys: its lock key (resolved once, with {@link MessageKey}) and the line it waits
 * in. Thread-safe.
 */
final class DeliveryKeys {

  private final MessageKey key;
  private final LockBackend backend;
  private final boolean messageOrdering;

  /**
   * @param key resolves a message's lock key
   * @param backend the lock store, which decides whether a key is valid
   * @param messageOrdering whether deliveries with an ordering key line up by it
   */
  DeliveryKeys(MessageKey key, LockBackend backend, boolean messageOrdering) {
    this.key = key;
    this.backend = backend;
    this.messageOrdering = messageOrdering;
  }

  /**
   * The line {@code d} joins, or null if it has no valid key (it runs at once and is settled as
   * unkeyed). A valid key is remembered on the delivery.
   *
   * <p>With message ordering on, a delivery with an ordering key lines up behind the earlier
   * deliveries of that ordering key: the client hands a key's next message to the receiver as soon
   * as the previous call returns (its {@code SequentialExecutorService}), not when it is acked, so
   * a parked message would otherwise be overtaken. Otherwise it lines up behind the deliveries of
   * its lock key. Deliveries of one lock key in different lines still never overlap: the store
   * parks the later one.
   */
  @Nullable String lineOf(Delivery d) {
    Optional<String> resolved = key.resolve(d.message());
    if (resolved.isEmpty()) {
      return null;
    }
    String k = resolved.get();
    try {
      backend.validateKey(k);
    } catch (IllegalArgumentException e) {
      return null;
    }
    d.lockKey(k);
    InboundMessage message = d.message();
    if (messageOrdering && !message.orderingKey().isEmpty()) {
      // The prefix keeps the two kinds of line apart for every key without a line break; a lock
      // key that did equal an ordering key's line would only share its line: the store still
      // decides which delivery runs.
      return "ordering-key\n" + message.orderingKey();
    }
    return k;
  }

  /**
   * {@code d}'s lock key: the one remembered when it lined up, else resolved now (the guard
   * validates it); empty if the message has none.
   */
  Optional<String> lockKey(Delivery d) {
    String known = d.lockKey();
    return known != null ? Optional.of(known) : key.resolve(d.message());
  }

  /** What the key is, for log lines about a message without one. */
  String description() {
    return key.description();
  }
}
