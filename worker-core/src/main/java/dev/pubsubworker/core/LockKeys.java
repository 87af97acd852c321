package dev.pubsubworker.core;

import java.util.Objects;

/**
 * The rules every lock key obeys, checked before any I/O. Keys are opaque strings: any well-formed
 * Unicode text, non-empty, within the backend's byte limit. The messages name the problem and never
 * echo the key (it may carry business data).
 */
public final class LockKeys {

  private LockKeys() {}

  /**
   * Checks a key.
   *
   * @param key the key
   * @param maxUtf8Bytes the backend's limit, in UTF-8 bytes
   * @throws NullPointerException if key is null
   * @throws IllegalArgumentException if the key is empty, has an unpaired surrogate (it would not
   *     survive a UTF-8 round trip), or is longer than {@code maxUtf8Bytes}
   */
  public static void requireValid(String key, int maxUtf8Bytes) {
    Objects.requireNonNull(key, "lock key is null");
    if (key.isEmpty()) {
      throw new IllegalArgumentException("lock key is empty");
    }
    // One pass: well-formedness and the UTF-8 length together.
    int bytes = 0;
    int n = key.length();
    for (int i = 0; i < n; i++) {
      char c = key.charAt(i);
      if (c < 0x80) {
        bytes += 1;
      } else if (c < 0x800) {
        bytes += 2;
      } else if (!Character.isSurrogate(c)) {
        bytes += 3;
      } else if (Character.isHighSurrogate(c)
          && i + 1 < n
          && Character.isLowSurrogate(key.charAt(i + 1))) {
        bytes += 4;
        i++;
      } else {
        throw new IllegalArgumentException(
            "lock key has an unpaired surrogate U+"
                + String.format("%04X", (int) c)
                + " at index "
                + i
                + "; keys must be well-formed UTF-16");
      }
    }
    if (bytes > maxUtf8Bytes) {
      throw new IllegalArgumentException(
          "lock key is "
              + bytes
              + " UTF-8 bytes long; this backend's limit is "
              + maxUtf8Bytes
              + " bytes");
    }
  }

  /** The key's length in UTF-8 bytes, for a well-formed key. */
  public static int utf8Length(String key) {
    int bytes = 0;
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      if (c < 0x80) {
        bytes += 1;
      } else if (c < 0x800) {
        bytes += 2;
      } else if (Character.isHighSurrogate(c)) {
        bytes += 4;
        i++;
      } else {
        bytes += 3;
      }
    }
    return bytes;
  }
}
