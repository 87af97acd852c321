package dev.pubsubworker.core;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A key's record as {@link LockAdmin#inspect} read it. Every instance is a readable record: the
 * constructor refuses what {@link LockBackend} calls unreadable (see {@link #parse}).
 *
 * @param key the lock key
 * @param state CLAIMED or DONE
 * @param fence the current fencing token, 1 to {@link LockBackend#MAX_FENCE}
 * @param leaseExpiry when the current (or last) lease lapses(d), 0 to {@link
 *     LockBackend#MAX_EPOCH_MILLIS} epoch milliseconds
 * @param expiresAt end of the retention window: after it the record may be removed and a claim
 *     starts over; for DONE, the end of duplicate suppression. In the same range as {@code
 *     leaseExpiry}.
 * @param claimToken the token of the claim that holds or last won the key, or {@code null} when it
 *     was released; 1 to {@value ClaimRequest#MAX_TOKEN_LENGTH} printable ASCII characters
 * @param fingerprint the stored payload fingerprint, or {@code null}
 * @param observedAt the backend clock's reading when the record was read, so a reader on another
 *     clock can tell whether the lease or window has lapsed
 */
public record LockRecord(
    String key,
    LockState state,
    long fence,
    Instant leaseExpiry,
    Instant expiresAt,
    @Nullable String claimToken,
    @Nullable String fingerprint,
    Instant observedAt) {

  /** The names {@link #parse} reads the stored fields by. */
  private static final String STATE = "state";

  private static final String FENCE = "fence";
  private static final String LEASE_EXPIRY = "leaseExpiry";
  private static final String EXPIRES_AT = "expiresAt";
  private static final String CLAIM_TOKEN = "claimToken";
  private static final String FINGERPRINT = "fingerprint";

  /** An integer as every backend writes one: decimal digits without leading zeros or plus sign. */
  private static final Pattern CANONICAL_INTEGER = Pattern.compile("0|-?[1-9][0-9]*");

  /** How much of a stored value a problem's description quotes. */
  private static final int QUOTED_CHARS = 40;

  /**
   * Validates the components.
   *
   * @throws NullPointerException if a required component is null
   * @throws IllegalArgumentException if the fence, a time or the claim token is outside its range;
   *     the message names the component and the value
   */
  public LockRecord {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(state, "state");
    Objects.requireNonNull(leaseExpiry, "leaseExpiry");
    Objects.requireNonNull(expiresAt, "expiresAt");
    Objects.requireNonNull(observedAt, "observedAt");
    if (fence < 1 || fence > LockBackend.MAX_FENCE) {
      throw new IllegalArgumentException(
          "fence " + fence + " is outside 1.." + LockBackend.MAX_FENCE);
    }
    requireTime(LEASE_EXPIRY, leaseExpiry);
    requireTime(EXPIRES_AT, expiresAt);
    if (claimToken != null) {
      ClaimTokens.requireValid(claimToken);
    }
  }

  /** Whether a claim made at {@link #observedAt()} would win (lapsed lease or window). */
  public boolean reclaimable() {
    return switch (state) {
      case CLAIMED -> !observedAt.isBefore(leaseExpiry);
      case DONE -> !observedAt.isBefore(expiresAt);
    };
  }

  /**
   * Reads a record from the fields a store holds for it, strictly, by the one set of rules every
   * backend applies (see {@link LockBackend}, "Reading strictly"): a backend hands in what it found
   * and gets the record or the {@link InvalidLockRecordException} to throw.
   *
   * <p>{@code stored} has one entry per field the store holds, by the names of this record's
   * components ({@code state}, {@code fence}, {@code leaseExpiry}, {@code expiresAt}, {@code
   * claimToken}, {@code fingerprint}), each value as text: numbers (times in epoch milliseconds) in
   * decimal, as the backend writes them. A field the store lacks is left out; entries of other
   * names are ignored here and kept in the exception, so that an operator sees everything stored.
   * Required: {@code state} exactly {@code CLAIMED} or {@code DONE} (no other case, no spaces),
   * {@code fence} 1 to {@link LockBackend#MAX_FENCE}, both times 0 to {@link
   * LockBackend#MAX_EPOCH_MILLIS}, each integer in plain decimal digits (no plus sign, no leading
   * zeros, no spaces). Optional: {@code claimToken} (1 to {@value ClaimRequest#MAX_TOKEN_LENGTH}
   * printable ASCII characters) and {@code fingerprint} (any text).
   *
   * @param key the key the record was read for
   * @param stored the fields as stored (not modified, not kept)
   * @param observedAt the backend clock's reading at the read
   * @param where the verb and the backend's namespace, for the exception's message, e.g. {@code
   *     "claim failed on redis prefix 'pw:' at 10.0.0.5:6379"}
   * @return the record
   * @throws InvalidLockRecordException naming the first problem found, carrying {@code stored}
   */
  public static LockRecord parse(
      String key, Map<String, String> stored, Instant observedAt, String where) {
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(stored, "stored");
    Objects.requireNonNull(observedAt, "observedAt");
    Objects.requireNonNull(where, "where");
    try {
      String state = required(stored, STATE);
      LockState parsed =
          switch (state) {
            case "CLAIMED" -> LockState.CLAIMED;
            case "DONE" -> LockState.DONE;
            default ->
                throw new IllegalArgumentException(
                    "state " + quote(state) + " is neither CLAIMED nor DONE");
          };
      return new LockRecord(
          key,
          parsed,
          integer(stored, FENCE, 1, LockBackend.MAX_FENCE),
          Instant.ofEpochMilli(integer(stored, LEASE_EXPIRY, 0, LockBackend.MAX_EPOCH_MILLIS)),
          Instant.ofEpochMilli(integer(stored, EXPIRES_AT, 0, LockBackend.MAX_EPOCH_MILLIS)),
          stored.get(CLAIM_TOKEN),
          stored.get(FINGERPRINT),
          observedAt);
    } catch (IllegalArgumentException e) {
      throw new InvalidLockRecordException(where, key, String.valueOf(e.getMessage()), stored);
    }
  }

  private static String required(Map<String, String> stored, String field) {
    String value = stored.get(field);
    if (value == null) {
      throw new IllegalArgumentException("it has no " + field);
    }
    return value;
  }

  private static long integer(Map<String, String> stored, String field, long min, long max) {
    String text = required(stored, field);
    if (!CANONICAL_INTEGER.matcher(text).matches()) {
      throw new IllegalArgumentException(
          field + " " + quote(text) + " is not an integer in decimal digits");
    }
    long value;
    try {
      value = Long.parseLong(text);
    } catch (NumberFormatException e) {
      value = text.startsWith("-") ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
    if (value < min || value > max) {
      throw new IllegalArgumentException(field + " " + text + " is outside " + min + ".." + max);
    }
    return value;
  }

  private static void requireTime(String field, Instant time) {
    if (time.isBefore(Instant.EPOCH)
        || time.isAfter(Instant.ofEpochMilli(LockBackend.MAX_EPOCH_MILLIS))) {
      throw new IllegalArgumentException(
          field
              + " "
              + time
              + " is outside 0.."
              + LockBackend.MAX_EPOCH_MILLIS
              + " epoch milliseconds");
    }
  }

  /**
   * A stored value for a problem's text: quoted; controls, separators, bidi overrides, quotes and
   * surrogates escaped (so that a log line stays one line that reads as written); cut after a few
   * characters.
   */
  private static String quote(String value) {
    StringBuilder sb = new StringBuilder("'");
    int n = Math.min(value.length(), QUOTED_CHARS);
    for (int i = 0; i < n; i++) {
      char c = value.charAt(i);
      if (c < 0x20
          || (c >= 0x7f && c <= 0x9f)
          || (c >= 0x2028 && c <= 0x202e)
          || (c >= 0x2066 && c <= 0x2069)
          || c == '\''
          || c == '\\'
          || Character.isSurrogate(c)) {
        sb.append(String.format("\\u%04x", (int) c));
      } else {
        sb.append(c);
      }
    }
    if (value.length() > n) {
      sb.append("...");
    }
    return sb.append('\'').toString();
  }
}
