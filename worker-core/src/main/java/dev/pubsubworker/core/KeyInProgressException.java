package dev.pubsubworker.core;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The key is held by another live claim, so the work did not run; retry the delivery later (nack).
 * Thrown rather than returned so that ignoring it is impossible: left uncaught it reaches the
 * runtime, which nacks.
 *
 * <p>Also thrown by {@link IdempotencyGuard#mutex} on a key that {@code lock} completed (a DONE
 * record): a mutex never runs over a finished key.
 *
 * <p>The message does not contain the key (it may carry business data); {@link #key()} does.
 */
public final class KeyInProgressException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /** Why the key was not available. */
  public enum Reason {
    /** Another claim holds a live lease. */
    HELD_BY_OTHER,
    /** A mutex found the key DONE (completed by {@code lock}). */
    DONE
  }

  private final String key;
  private final Reason reason;
  private final transient @Nullable Instant leaseExpiry;

  /**
   * @param key the contended key
   * @param reason why it was not available
   * @param leaseExpiry when the holder's lease lapses (backend clock), or null for {@link
   *     Reason#DONE}
   */
  public KeyInProgressException(String key, Reason reason, @Nullable Instant leaseExpiry) {
    super(
        reason == Reason.DONE
            ? "key is DONE; a mutex does not run over a completed key"
            : "key is held by another claim until " + leaseExpiry);
    this.key = Objects.requireNonNull(key, "key");
    this.reason = Objects.requireNonNull(reason, "reason");
    this.leaseExpiry = leaseExpiry;
  }

  /** The contended key. */
  public String key() {
    return key;
  }

  /** Why the key was not available. */
  public Reason reason() {
    return reason;
  }

  /** When the holder's lease lapses, on the backend's clock; empty for {@link Reason#DONE}. */
  public Optional<Instant> leaseExpiry() {
    return Optional.ofNullable(leaseExpiry);
  }
}
