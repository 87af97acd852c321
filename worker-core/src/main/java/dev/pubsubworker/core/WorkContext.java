package dev.pubsubworker.core;

import java.time.Instant;
import java.util.Optional;

/**
 * What guarded work knows about its claim. Valid only during the work; thread-safe.
 *
 * <p>Pass {@link #fencingToken()} to any sink that can compare it (a database column, an API that
 * accepts a version): a sink that refuses tokens lower than the highest it has seen makes a zombie
 * holder harmless even when its write arrives late.
 */
public interface WorkContext {

  /** The lock key. */
  String key();

  /** The claim's fencing token: at least 1, strictly higher than any earlier claim's on the key. */
  long fencingToken();

  /**
   * Whether the claim is known to be lost: an extension found the fence stale, or the lease ran out
   * (on this process's clock) without a successful extension. Once true it stays true.
   */
  boolean isLeaseLost();

  /**
   * When the lease lapses unless extended again, estimated on this process's clock from the last
   * successful claim or extension (sent time + lease).
   */
  Instant leaseExpiry();

  /**
   * Throws if {@link #isLeaseLost()}; call it before an irreversible step.
   *
   * @throws LeaseLostException if the lease is lost
   */
  void checkLease();

  /**
   * Whether this claim took over an earlier one on the same record (fence above 1): a crashed or
   * released holder, or a DONE record whose suppression window lapsed. A hint that an earlier
   * attempt may have done part of the work.
   */
  boolean isReclaim();

  /** When the claim was won, on this process's clock. */
  Instant claimedAt();

  /**
   * A resource the backend shares with the work, such as the {@code java.sql.Connection} of the
   * transaction that will also write DONE in transactional mode.
   *
   * @return the resource if there is one of that type
   */
  <R> Optional<R> resource(Class<R> type);
}
