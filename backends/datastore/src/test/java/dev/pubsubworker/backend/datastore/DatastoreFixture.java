package dev.pubsubworker.backend.datastore;

import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.OffsetClock;
import dev.pubsubworker.testservices.DatastoreEmulator;
import java.time.Duration;
import java.util.function.Function;

/**
 * A {@link DatastoreLockBackend} on one of Google's emulators, in a namespace of its own, judging
 * expiry on an {@link OffsetClock} so tests move time without sleeping.
 */
final class DatastoreFixture implements BackendFixture {
  private final OffsetClock clock = new OffsetClock();
  private final DatastoreLockSettings settings;
  private final DatastoreLockBackend backend;
  private DatastoreLockBackend second;

  DatastoreFixture(DatastoreEmulator emulator) {
    this(emulator, b -> b);
  }

  /** A fixture whose settings {@code tweak} adjusts. */
  DatastoreFixture(
      DatastoreEmulator emulator,
      Function<DatastoreLockSettings.Builder, DatastoreLockSettings.Builder> tweak) {
    this.settings = tweak.apply(settingsFor(emulator)).clock(clock).build();
    this.backend = DatastoreLockBackend.create(settings);
  }

  /** Settings for the emulator, in a fresh namespace, with a quick retry backoff. */
  static DatastoreLockSettings.Builder settingsFor(DatastoreEmulator emulator) {
    return DatastoreLockSettings.newBuilder()
        .projectId(emulator.projectId())
        .emulatorHost(emulator.hostPort())
        .namespace(emulator.newNamespace())
        .maxAttempts(10)
        .initialBackoff(Duration.ofMillis(5))
        .maxBackoff(Duration.ofMillis(200));
  }

  @Override
  public DatastoreLockBackend backend() {
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

  @Override
  public synchronized LockBackend secondInstance() {
    if (second == null) {
      second = DatastoreLockBackend.create(settings);
    }
    return second;
  }

  DatastoreLockSettings settings() {
    return settings;
  }

  OffsetClock clock() {
    return clock;
  }

  @Override
  public synchronized void close() {
    backend.close();
    if (second != null) {
      second.close();
    }
  }
}
