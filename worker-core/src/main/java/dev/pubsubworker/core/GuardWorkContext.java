package dev.pubsubworker.core;

import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * The {@link WorkContext} an {@link IdempotencyGuard} hands to one call's work: the claim, its
 * {@link LeaseKeeper}, and whether the work is still running, has ended, or was abandoned.
 *
 * <p>Thread-safe. The state moves once from RUNNING to either ENDED (the work returned or threw, on
 * the work's thread) or ABANDONED ({@link IdempotencyGuard#abandon}, from any thread); whoever
 * moves it settles the claim in the store, so the claim is never released twice.
 */
final class GuardWorkContext implements WorkContext {

  private static final int RUNNING = 0;
  private static final int ENDED = 1;
  private static final int ABANDONED = 2;

  private final ClaimedRun owner;
  private final Claim claim;
  private final LeaseKeeper keeper;
  private final Instant claimedAt;
  private final AtomicInteger state = new AtomicInteger(RUNNING);

  /** The backend's resource for the work (transactional mode), or null. */
  private volatile @Nullable Object resource;

  GuardWorkContext(ClaimedRun owner, Claim claim, LeaseKeeper keeper, Instant claimedAt) {
    this.owner = owner;
    this.claim = claim;
    this.keeper = keeper;
    this.claimedAt = claimedAt;
  }

  /** Whether {@code run} (and so its guard) created this context. */
  boolean belongsTo(ClaimedRun run) {
    return owner == run;
  }

  Claim claim() {
    return claim;
  }

  LeaseKeeper keeper() {
    return keeper;
  }

  void shareResource(@Nullable Object value) {
    this.resource = value;
  }

  /** Marks the work ended; false if it was abandoned first (its claim is already released). */
  boolean end() {
    return state.compareAndSet(RUNNING, ENDED);
  }

  /**
   * Marks the work abandoned and stops its heartbeat (the lease counts as lost from now on); false
   * if the work had already ended or been abandoned.
   */
  boolean abandon() {
    if (!state.compareAndSet(RUNNING, ABANDONED)) {
      return false;
    }
    keeper.abandon();
    return true;
  }

  @Override
  public String key() {
    return claim.key();
  }

  @Override
  public long fencingToken() {
    return claim.fence();
  }

  @Override
  public boolean isLeaseLost() {
    return keeper.isLost();
  }

  @Override
  public Instant leaseExpiry() {
    return keeper.leaseExpiry();
  }

  @Override
  public void checkLease() {
    if (keeper.isLost()) {
      throw new LeaseLostException(claim.key(), claim.fence());
    }
  }

  @Override
  public boolean isReclaim() {
    return claim.fence() > 1;
  }

  @Override
  public Instant claimedAt() {
    return claimedAt;
  }

  @Override
  public <R> Optional<R> resource(Class<R> type) {
    Object r = resource;
    return type.isInstance(r) ? Optional.of(type.cast(r)) : Optional.empty();
  }
}
