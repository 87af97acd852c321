package dev.pubsubworker.core;

import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * What {@link IdempotencyGuard#lock} did with the work: ran it, or skipped it as a duplicate.
 *
 * <p>Both answers mean "this delivery is settled; acknowledge it". That is why contention is not a
 * third answer but a {@link KeyInProgressException}: a caller that ignores this result can only
 * ever acknowledge a delivery whose work ran or had already run; it can never drop one that must be
 * retried.
 *
 * @param <T> the work's result type
 */
public sealed interface LockResult<T> permits LockResult.Executed, LockResult.Duplicate {

  /** Whether the work ran in this call. */
  boolean executed();

  /** The work's result if it ran in this call and returned non-null. */
  Optional<T> result();

  /**
   * The work ran under the claim with fencing token {@code fence}.
   *
   * @param value what the work returned (may be null)
   * @param fence the fencing token the work ran under
   * @param completion whether DONE was recorded; every value means the work's effects stand except
   *     {@link Completion#FENCED_OUT_ROLLED_BACK}
   */
  record Executed<T>(@Nullable T value, long fence, Completion completion)
      implements LockResult<T> {
    /** Validates the components. */
    public Executed {
      Objects.requireNonNull(completion, "completion");
    }

    @Override
    public boolean executed() {
      return true;
    }

    @Override
    public Optional<T> result() {
      return Optional.ofNullable(value);
    }
  }

  /**
   * The key was already DONE: the work ran before, under an earlier delivery, and was skipped.
   *
   * @param key the key
   */
  record Duplicate<T>(String key) implements LockResult<T> {
    /** Validates the component. */
    public Duplicate {
      Objects.requireNonNull(key, "key");
    }

    @Override
    public boolean executed() {
      return false;
    }

    @Override
    public Optional<T> result() {
      return Optional.empty();
    }
  }
}
