package dev.pubsubworker.spring.boot;

import dev.pubsubworker.pubsub.MessageKey;

/** The {@code key} setting of a subscription: {@code message-id} or {@code attribute:NAME}. */
final class MessageKeys {

  private static final String ATTRIBUTE = "attribute:";

  private MessageKeys() {}

  /**
   * The key {@code text} names.
   *
   * @throws IllegalArgumentException saying what the setting accepts and what it was
   */
  static MessageKey parse(String text) {
    if (text.equals("message-id")) {
      return MessageKey.messageId();
    }
    if (text.startsWith(ATTRIBUTE)) {
      String name = text.substring(ATTRIBUTE.length());
      if (name.isEmpty()) {
        throw new IllegalArgumentException(
            "'attribute:' needs an attribute name, e.g. attribute:order_id");
      }
      return MessageKey.attribute(name);
    }
    throw new IllegalArgumentException(
        "must be message-id or attribute:NAME (any other key: a MessageKey in a"
            + " GuardedReceiverCustomizer), but was '"
            + text
            + "'");
  }
}
