package dev.pubsubworker.backend.datastore;

import com.google.cloud.Timestamp;
import com.google.cloud.datastore.Datastore;
import com.google.cloud.datastore.Entity;
import com.google.cloud.datastore.LongValue;
import com.google.cloud.datastore.StringValue;
import com.google.cloud.datastore.TimestampValue;
import com.google.cloud.datastore.Value;
import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.testkit.BackendFixture;
import dev.pubsubworker.testkit.OffsetClock;
import dev.pubsubworker.testservices.DatastoreEmulator;
import java.time.Duration;
import java.util.Map;
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
  private Datastore raw;

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

  /**
   * Settings for the emulator, in a fresh namespace, with more attempts than the default. The
   * backoff is the shipped one: the Firestore emulator resolves two transactions that read a key
   * and then both write it by failing both at its 2 s lock timeout ("Transaction lock timeout"),
   * and retries that follow each other within a few milliseconds meet the same way again; waits of
   * up to a second part them within a few attempts, where 200 ms did not under load.
   */
  static DatastoreLockSettings.Builder settingsFor(DatastoreEmulator emulator) {
    return DatastoreLockSettings.newBuilder()
        .projectId(emulator.projectId())
        .emulatorHost(emulator.hostPort())
        .namespace(emulator.newNamespace())
        .maxAttempts(10)
        .initialBackoff(DatastoreLockSettings.DEFAULT_INITIAL_BACKOFF)
        .maxBackoff(DatastoreLockSettings.DEFAULT_MAX_BACKOFF);
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

  /**
   * Replaces the key's entity with one holding {@code fields}, through a client of its own: each
   * value in the type this backend writes for its property where the text fits it (an integer for
   * the fence, a timestamp for a time), else as a string, which Datastore allows anywhere.
   */
  @Override
  public synchronized void writeRawRecord(String key, Map<String, String> fields) {
    if (raw == null) {
      raw = DatastoreTransactions.openClient(settings);
    }
    Entity.Builder entity = Entity.newBuilder(backend.keyOf(key));
    fields.forEach(
        (name, text) -> {
          Long number = asLong(text);
          Value<?> value;
          if (number != null && name.equals(StoredRecord.FENCE)) {
            value = LongValue.of(number);
          } else if (number != null
              && (name.equals(StoredRecord.LEASE_EXPIRY) || name.equals(StoredRecord.EXPIRES_AT))
              && fitsTimestamp(number)) {
            value = TimestampValue.of(Timestamp.ofTimeMicroseconds(number * 1000));
          } else {
            value = StringValue.of(text);
          }
          entity.set(name, value);
        });
    raw.put(entity.build());
  }

  /** The text as a long if it is one written canonically (so that it reads back the same). */
  private static Long asLong(String text) {
    try {
      long n = Long.parseLong(text);
      return Long.toString(n).equals(text) ? n : null;
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** Whether epoch milliseconds fit a Datastore timestamp (years 1 to 9999). */
  private static boolean fitsTimestamp(long millis) {
    return millis >= -62_135_596_800_000L && millis <= 253_402_300_799_999L;
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
