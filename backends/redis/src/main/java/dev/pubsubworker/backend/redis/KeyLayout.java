package dev.pubsubworker.backend.redis;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Where a lock key's record lives: the Redis key {@code namespace + UTF-8(key)}, where the
 * namespace is the prefix, followed by {@code {hashTag}} when one is set. Redis keys are
 * binary-safe, so any well-formed key round-trips byte for byte, braces and newlines included.
 */
final class KeyLayout {

  private final byte[] namespace;
  private final byte[] scanPattern;

  KeyLayout(String namespace) {
    this.namespace = namespace.getBytes(StandardCharsets.US_ASCII);
    this.scanPattern = (globEscape(namespace) + "*").getBytes(StandardCharsets.US_ASCII);
  }

  /** The Redis key of a (validated) lock key's record. */
  byte[] redisKey(String key) {
    byte[] k = key.getBytes(StandardCharsets.UTF_8);
    byte[] out = Arrays.copyOf(namespace, namespace.length + k.length);
    System.arraycopy(k, 0, out, namespace.length, k.length);
    return out;
  }

  /** The {@code SCAN MATCH} pattern that lists every record of this namespace. */
  byte[] scanPattern() {
    return scanPattern.clone();
  }

  /** Whether a key from {@code SCAN} really starts with the namespace (the pattern is a glob). */
  boolean owns(byte[] redisKey) {
    return redisKey.length > namespace.length
        && Arrays.equals(redisKey, 0, namespace.length, namespace, 0, namespace.length);
  }

  /** Escapes the glob metacharacters of SCAN MATCH so the prefix matches literally. */
  static String globEscape(String literal) {
    StringBuilder sb = new StringBuilder(literal.length() + 8);
    for (int i = 0; i < literal.length(); i++) {
      char c = literal.charAt(i);
      if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\' || c == '^' || c == '-') {
        sb.append('\\');
      }
      sb.append(c);
    }
    return sb.toString();
  }
}
