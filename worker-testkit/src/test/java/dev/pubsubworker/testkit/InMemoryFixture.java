package dev.pubsubworker.testkit;

import dev.pubsubworker.backend.memory.InMemoryLockBackend;
import dev.pubsubworker.core.InvalidLockRecordException;
import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.core.LockRecord;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;

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

  /**
   * Stores a readable record through {@link InMemoryLockBackend#put}; skips for an unreadable one,
   * which this backend cannot hold: it keeps records as {@link LockRecord}s, which are readable.
   */
  @Override
  public void writeRawRecord(String key, Map<String, String> fields) {
    LockRecord record;
    try {
      record = LockRecord.parse(key, fields, Instant.EPOCH, "the in-memory fixture");
    } catch (InvalidLockRecordException e) {
      Assumptions.abort(
          "the in-memory backend holds only records it can read, so none can be unreadable ("
              + e.problem()
              + ")");
      return;
    }
    backend.put(record);
  }
}
