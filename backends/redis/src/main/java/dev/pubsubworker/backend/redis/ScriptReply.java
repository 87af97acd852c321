package dev.pubsubworker.backend.redis;

import dev.pubsubworker.core.LockBackendException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The array a script returned, read element by element: any element that is missing or of the wrong
 * type is a {@link LockBackendException} ("unexpected reply") rather than a driver-level {@link
 * ClassCastException} or {@link IndexOutOfBoundsException}.
 */
final class ScriptReply {

  private final List<Object> values;
  private final String verb;
  private final RedisErrors errors;

  ScriptReply(List<Object> values, String verb, RedisErrors errors) {
    this.values = values;
    this.verb = verb;
    this.errors = errors;
  }

  /** How many elements the array has (0 for a nil reply). */
  int size() {
    return values == null ? 0 : values.size();
  }

  /** The raw element at {@code index}: a Long, a byte[], a List or null. */
  Object at(int index) {
    if (values == null || values.size() <= index) {
      throw unexpected();
    }
    return values.get(index);
  }

  /** The nested array at {@code index}, read the same way (one entry of a batch reply). */
  ScriptReply listAt(int index) {
    if (!(at(index) instanceof List<?> list)) {
      throw unexpected();
    }
    @SuppressWarnings("unchecked")
    List<Object> entry = (List<Object>) list;
    return new ScriptReply(entry, verb, errors);
  }

  /** The integer at {@code index}. */
  long longAt(int index) {
    if (values == null || values.size() <= index || !(values.get(index) instanceof Long value)) {
      throw unexpected();
    }
    return value;
  }

  /** The UTF-8 string at {@code index}, or null for a nil element. */
  String stringAt(int index) {
    if (values == null || values.size() <= index) {
      throw unexpected();
    }
    Object value = values.get(index);
    if (value == null) {
      return null;
    }
    if (!(value instanceof byte[] bytes)) {
      throw unexpected();
    }
    return new String(bytes, StandardCharsets.UTF_8);
  }

  /** The error for a reply this verb's script never returns. */
  LockBackendException unexpected() {
    return errors.unexpected(verb);
  }
}
