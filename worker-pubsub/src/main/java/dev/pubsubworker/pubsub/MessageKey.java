package dev.pubsubworker.pubsub;

import dev.pubsubworker.api.InboundMessage;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

/**
 * What a message's idempotency key is: the key the guard claims, exactly as the lock store holds
 * it. Two messages with one key are one piece of work to {@link GuardMode#LOCK} (the second is a
 * duplicate) and one line to {@link GuardMode#MUTEX}, so choose it to name the side effect: a
 * business id ({@code attribute("order_id")}) catches a producer that publishes an event twice, the
 * message id only Pub/Sub's redeliveries.
 *
 * <p>Keys of several subscriptions on one lock store share one key space: put each subscription's
 * keys under a namespace of its own ({@link #withNamespace}) unless they are meant to de-duplicate
 * across each other.
 *
 * <p>A message for which {@link #resolve} is empty, or whose key the lock store refuses (empty, too
 * long, ill-formed), is unkeyed: the receiver fails closed and dead-letters it (see {@link
 * GuardedReceiver}). Implementations must be thread-safe and must not throw.
 */
@FunctionalInterface
public interface MessageKey {

  /**
   * The message's key, or empty when it has none.
   *
   * @param message the delivered message
   */
  Optional<String> resolve(InboundMessage message);

  /**
   * What this key is, for the log lines and dead letters of a message it did not resolve for ("no
   * key: DESCRIPTION did not resolve"). Default: {@code "the key function"}.
   */
  default String description() {
    return "the key function";
  }

  /**
   * This key under {@code namespace}: {@code namespace + ":" + key}. With a namespace that contains
   * no {@code :}, the first {@code :} always ends the namespace, so two namespaces never share a
   * key.
   *
   * @throws IllegalArgumentException if {@code namespace} is empty or contains {@code :}
   */
  default MessageKey withNamespace(String namespace) {
    Objects.requireNonNull(namespace, "namespace");
    if (namespace.isEmpty() || namespace.indexOf(':') >= 0) {
      throw new IllegalArgumentException(
          "namespace must be non-empty and without ':', but was '" + namespace + "'");
    }
    MessageKey inner = this;
    return of(description(), m -> inner.resolve(m).map(k -> namespace + ":" + k));
  }

  /**
   * Pub/Sub's message id: the same on every redelivery, new on every publish; except that a message
   * republished by a redrive is keyed on the original id it carries ({@link
   * DeadLetterAttributes#keyMessageId}), so it is the same work as the first message.
   */
  static MessageKey messageId() {
    return of("message-id", m -> Optional.of(DeadLetterAttributes.keyMessageId(m)));
  }

  /**
   * The value of attribute {@code name}; a message without it (or with an empty value) is unkeyed.
   *
   * @throws IllegalArgumentException if {@code name} is empty
   */
  static MessageKey attribute(String name) {
    Objects.requireNonNull(name, "name");
    if (name.isEmpty()) {
      throw new IllegalArgumentException("the attribute name must not be empty");
    }
    return of("attribute:" + name, m -> m.attribute(name).filter(v -> !v.isEmpty()));
  }

  /**
   * A key computed by {@code resolve}, described as {@code description} in log lines.
   *
   * @param description what the key is, e.g. {@code "template:orders:{po_id}"}
   * @param resolve the key of a message, or empty; must be thread-safe and must not throw
   */
  static MessageKey of(String description, Function<InboundMessage, Optional<String>> resolve) {
    Objects.requireNonNull(description, "description");
    Objects.requireNonNull(resolve, "resolve");
    return new MessageKey() {
      @Override
      public Optional<String> resolve(InboundMessage message) {
        return resolve.apply(message);
      }

      @Override
      public String description() {
        return description;
      }

      @Override
      public String toString() {
        return "MessageKey[" + description + "]";
      }
    };
  }
}
