package dev.pubsubworker.testkit;

import dev.pubsubworker.backend.memory.InMemoryLockBackend;
import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackend;
import java.time.Duration;

/** The in-memory backend on an {@link OffsetClock}. */
final class InMemoryFixture implements BackendFixture {
  private final OffsetClock clock = new OffsetClock();
  private final InMemoryLockBackend backend = new InMemoryLockBackend(clock);

  @Override
  public LockBackend backend() {
    return backend;
  }

  @Override
  public LockAdmin admin() {
    return backend;
  }

  @Override
  public void advanceClock(Duration amount) {
    clock.advance(amount);
  }
}
