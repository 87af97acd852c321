package dev.pubsubworker.backend.datastore;

import java.util.regex.Pattern;

/**
 * Maps lock keys to Datastore key names and back, injectively. A Datastore name must not match the
 * reserved pattern {@code __.*__}; such a key (and, so that decoding stays unambiguous, any key
 * starting with the escape character {@value #ESCAPE}) is stored with one {@value #ESCAPE}
 * prepended. Every other key is stored verbatim, so names stay readable in the console. The escape
 * costs one byte, which is why {@link DatastoreLockBackend#MAX_KEY_BYTES} is one below Datastore's
 * 1,500-byte name limit.
 */
final class KeyNames {

  /** Prepended to a key that would be a reserved name or starts with itself. */
  static final char ESCAPE = '~';

  private static final Pattern RESERVED = Pattern.compile("__.*__", Pattern.DOTALL);

  private KeyNames() {}

  /** The Datastore name of a valid lock key. */
  static String toName(String key) {
    if (key.charAt(0) == ESCAPE || RESERVED.matcher(key).matches()) {
      return ESCAPE + key;
    }
    return key;
  }

  /** The lock key stored under a Datastore name written by {@link #toName}. */
  static String toKey(String name) {
    return !name.isEmpty() && name.charAt(0) == ESCAPE ? name.substring(1) : name;
  }
}
