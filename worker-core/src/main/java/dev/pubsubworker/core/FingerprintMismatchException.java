package dev.pubsubworker.core;

import java.util.Objects;

/**
 * A delivery's payload fingerprint differs from the one stored for its key, and the guard is
 * configured with {@link FingerprintPolicy#REJECT}: the key is reused for a different payload (a
 * key collision or a producer bug), so treating the delivery as a duplicate would silently drop it.
 * The work did not run; the delivery should be nacked and, eventually, dead-lettered.
 */
public final class FingerprintMismatchException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final String key;

  /**
   * @param key the key whose stored fingerprint differs
   */
  public FingerprintMismatchException(String key) {
    super("payload fingerprint differs from the one stored for this key");
    this.key = Objects.requireNonNull(key, "key");
  }

  /** The key whose stored fingerprint differs. */
  public String key() {
    return key;
  }
}
