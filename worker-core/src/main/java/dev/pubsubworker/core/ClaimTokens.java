package dev.pubsubworker.core;

import java.security.SecureRandom;
import java.util.Base64;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Claim tokens without a contended random source: a 128-bit random prefix drawn once per process
 * (per class loader) from {@link SecureRandom}, then a counter. Two processes share a prefix with
 * probability about 2<sup>-128</sup> per pair, and within a process the counter never repeats, so
 * every token is unique per claim attempt. A token is 22 URL-safe Base64 characters, a dot and up
 * to 13 base-36 digits: printable ASCII without spaces, at most 36 characters (well within {@link
 * ClaimRequest#MAX_TOKEN_LENGTH}).
 *
 * <p>Tokens are identifiers, not secrets: the counter makes the next token of a process
 * predictable, which is harmless because a token only lets a caller re-affirm its own claim on a
 * store it can already write to.
 *
 * <p>Thread-safe.
 */
final class ClaimTokens {

  private static final String PREFIX = newPrefix();
  private static final AtomicLong COUNTER = new AtomicLong();

  private ClaimTokens() {}

  /** A token no other claim attempt, in this process or another, has. */
  static String next() {
    return PREFIX + Long.toString(COUNTER.incrementAndGet(), 36);
  }

  /**
   * Checks a claim token's form: 1 to {@link ClaimRequest#MAX_TOKEN_LENGTH} printable ASCII
   * characters without spaces. The one rule for a request's token and a stored one.
   *
   * @throws IllegalArgumentException naming the length or the first bad character
   */
  static void requireValid(String token) {
    if (token.isEmpty() || token.length() > ClaimRequest.MAX_TOKEN_LENGTH) {
      throw new IllegalArgumentException(
          "claimToken must be 1 to "
              + ClaimRequest.MAX_TOKEN_LENGTH
              + " characters, but was "
              + token.length());
    }
    for (int i = 0; i < token.length(); i++) {
      char c = token.charAt(i);
      if (c < 0x21 || c > 0x7e) {
        throw new IllegalArgumentException(
            "claimToken must be printable ASCII without spaces, but has U+"
                + String.format("%04X", (int) c)
                + " at index "
                + i);
      }
    }
  }

  private static String newPrefix() {
    byte[] bytes = new byte[16];
    new SecureRandom().nextBytes(bytes);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes) + ".";
  }
}
