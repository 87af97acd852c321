package dev.pubsubworker.runtime.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * How a subscription derives a message's idempotency key. Written in config as one string:
 *
 * <ul>
 *   <li>{@code message-id} (the default): Pub/Sub's message id. Catches redeliveries of one
 *       publish, not a producer that publishes the same event twice. A message {@code redrive
 *       --republish} published carries the original id ({@code pubsub-worker-message-id}), which
 *       the caller passes instead of the new one, so it is the same work as the first message.
 *   <li>{@code attribute:NAME}: the value of attribute NAME, e.g. {@code attribute:po_id}.
 *   <li>{@code template:TEXT}: TEXT with {@code {NAME}} replaced by attribute NAME, {@code
 *       {message-id}} by the message id and {@code {ordering-key}} by the ordering key; {@code {{}}
 *       and {@code }}} stand for literal braces. E.g. {@code template:orders:{po_id}}.
 * </ul>
 *
 * A key that cannot be resolved (a named attribute missing or empty) makes the message unkeyed: the
 * runtime dead-letters it (nacks it only without a dead-letter topic) unless the subscription
 * allows unguarded runs.
 */
public sealed interface KeySpec permits KeySpec.MessageId, KeySpec.Attribute, KeySpec.Template {

  /**
   * The key for a message, or empty when a part it needs is missing or empty.
   *
   * @param messageId the message id
   * @param attributes the message attributes
   * @param orderingKey the ordering key, empty string when none
   */
  Optional<String> resolve(String messageId, Map<String, String> attributes, String orderingKey);

  /** The config form of this spec. */
  String text();

  /**
   * Parses the config form.
   *
   * @throws IllegalArgumentException naming what is wrong, e.g. an empty attribute name or a
   *     template without a placeholder
   */
  static KeySpec parse(String text) {
    Objects.requireNonNull(text, "text");
    if (text.equals("message-id")) {
      return new MessageId();
    }
    if (text.startsWith("attribute:")) {
      String name = text.substring("attribute:".length());
      if (name.isEmpty()) {
        throw new IllegalArgumentException(
            "'attribute:' needs an attribute name, e.g. attribute:po_id");
      }
      return new Attribute(name);
    }
    if (text.startsWith("template:")) {
      return Template.parse(text.substring("template:".length()));
    }
    throw new IllegalArgumentException(
        "must be message-id, attribute:NAME or template:TEXT, but was '" + text + "'");
  }

  /** The message id. */
  record MessageId() implements KeySpec {
    @Override
    public Optional<String> resolve(String messageId, Map<String, String> attributes, String ok) {
      return messageId == null || messageId.isEmpty() ? Optional.empty() : Optional.of(messageId);
    }

    @Override
    public String text() {
      return "message-id";
    }
  }

  /**
   * One attribute's value.
   *
   * @param name the attribute name
   */
  record Attribute(String name) implements KeySpec {
    @Override
    public Optional<String> resolve(String messageId, Map<String, String> attributes, String ok) {
      String value = attributes.get(name);
      return value == null || value.isEmpty() ? Optional.empty() : Optional.of(value);
    }

    @Override
    public String text() {
      return "attribute:" + name;
    }
  }

  /**
   * A template of literal text and placeholders.
   *
   * @param source the template text as written
   * @param parts literal strings and placeholders, in order
   */
  record Template(String source, List<Part> parts) implements KeySpec {

    /** A literal piece or a placeholder. */
    public record Part(String text, boolean placeholder) {}

    static Template parse(String source) {
      List<Part> parts = new ArrayList<>();
      StringBuilder literal = new StringBuilder();
      boolean hasPlaceholder = false;
      for (int i = 0; i < source.length(); i++) {
        char c = source.charAt(i);
        if (c == '{' && i + 1 < source.length() && source.charAt(i + 1) == '{') {
          literal.append('{');
          i++;
        } else if (c == '}' && i + 1 < source.length() && source.charAt(i + 1) == '}') {
          literal.append('}');
          i++;
        } else if (c == '{') {
          int close = source.indexOf('}', i);
          if (close < 0) {
            throw new IllegalArgumentException("template has an unclosed '{' at index " + i);
          }
          String name = source.substring(i + 1, close);
          if (name.isEmpty()) {
            throw new IllegalArgumentException(
                "template has an empty placeholder {} at index " + i);
          }
          if (literal.length() > 0) {
            parts.add(new Part(literal.toString(), false));
            literal.setLength(0);
          }
          parts.add(new Part(name, true));
          hasPlaceholder = true;
          i = close;
        } else if (c == '}') {
          throw new IllegalArgumentException(
              "template has an unmatched '}' at index " + i + " (write }} for a literal brace)");
        } else {
          literal.append(c);
        }
      }
      if (literal.length() > 0) {
        parts.add(new Part(literal.toString(), false));
      }
      if (!hasPlaceholder) {
        throw new IllegalArgumentException(
            "template has no {placeholder}: every message would share one key");
      }
      return new Template(source, List.copyOf(parts));
    }

    @Override
    public Optional<String> resolve(
        String messageId, Map<String, String> attributes, String orderingKey) {
      StringBuilder key = new StringBuilder();
      for (Part part : parts) {
        if (!part.placeholder()) {
          key.append(part.text());
          continue;
        }
        String value =
            switch (part.text()) {
              case "message-id" -> messageId;
              case "ordering-key" -> orderingKey;
              default -> attributes.get(part.text());
            };
        if (value == null || value.isEmpty()) {
          return Optional.empty();
        }
        key.append(value);
      }
      return Optional.of(key.toString());
    }

    @Override
    public String text() {
      return "template:" + source;
    }
  }
}
