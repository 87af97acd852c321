package dev.pubsubworker.backend.datastore;

import com.google.cloud.Timestamp;
import com.google.cloud.datastore.Entity;
import com.google.cloud.datastore.Key;
import com.google.cloud.datastore.LongValue;
import com.google.cloud.datastore.StringValue;
import com.google.cloud.datastore.TimestampValue;
import com.google.cloud.datastore.Value;
import com.google.cloud.datastore.ValueType;
import dev.pubsubworker.core.InvalidLockRecordException;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.core.LockRecord;
import dev.pubsubworker.core.LockState;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

/**
 * One lock record as stored in its entity. Property names are the entity's schema (documented in
 * the module README); every property is excluded from indexes except {@code expiresAt}, which
 * {@code purgeExpired} queries (and only when the settings index it).
 */
record StoredRecord(
    LockState state,
    long fence,
    Instant leaseExpiry,
    Instant expiresAt,
    String claimToken,
    String fingerprint) {

  static final String STATE = "state";
  static final String FENCE = "fence";
  static final String LEASE_EXPIRY = "leaseExpiry";
  static final String EXPIRES_AT = "expiresAt";
  static final String CLAIM_TOKEN = "claimToken";
  static final String FINGERPRINT = "fingerprint";

  /** The type each property is written with, in the order they are checked. */
  private static final Map<String, ValueType> TYPES = new LinkedHashMap<>();

  static {
    TYPES.put(STATE, ValueType.STRING);
    TYPES.put(FENCE, ValueType.LONG);
    TYPES.put(LEASE_EXPIRY, ValueType.TIMESTAMP);
    TYPES.put(EXPIRES_AT, ValueType.TIMESTAMP);
    TYPES.put(CLAIM_TOKEN, ValueType.STRING);
    TYPES.put(FINGERPRINT, ValueType.STRING);
  }

  /**
   * Reads a lock entity strictly ({@link LockRecord#parse}): each property must have the type this
   * backend writes (string state, integer fence, timestamp times, string token and fingerprint) and
   * a value in range.
   *
   * @param where the verb and the backend's namespace, for the error's message
   * @throws InvalidLockRecordException if the entity is not a record this backend can read
   */
  static StoredRecord fromEntity(Entity e, String where) {
    String key = KeyNames.toKey(e.getKey().getName());
    Map<String, String> fields = fields(e);
    for (Map.Entry<String, ValueType> expected : TYPES.entrySet()) {
      String name = expected.getKey();
      if (e.contains(name)) {
        ValueType type = e.getValue(name).getType();
        if (type != expected.getValue() && type != ValueType.NULL) {
          throw new InvalidLockRecordException(
              where,
              key,
              "property " + name + " is a " + type + ", not a " + expected.getValue(),
              fields);
        }
      }
    }
    LockRecord r = LockRecord.parse(key, fields, Instant.EPOCH, where);
    return new StoredRecord(
        r.state(), r.fence(), r.leaseExpiry(), r.expiresAt(), r.claimToken(), r.fingerprint());
  }

  /**
   * Every property of the entity as text, in name order: strings as they are, integers in decimal,
   * timestamps in epoch milliseconds, anything else as the client prints it. A null property counts
   * as absent.
   */
  static Map<String, String> fields(Entity e) {
    Map<String, String> fields = new LinkedHashMap<>();
    for (String name : new TreeSet<>(e.getNames())) {
      Value<?> v = e.getValue(name);
      switch (v.getType()) {
        case NULL -> {}
        case STRING -> fields.put(name, e.getString(name));
        case LONG -> fields.put(name, Long.toString(e.getLong(name)));
        case TIMESTAMP ->
            fields.put(name, Long.toString(toInstant(e.getTimestamp(name)).toEpochMilli()));
        default -> fields.put(name, String.valueOf(v.get()));
      }
    }
    return fields;
  }

  /**
   * The entity's {@code expiresAt}, if it is a timestamp: what {@code purgeExpired} judges by,
   * whatever the rest of the entity holds.
   */
  static Optional<Instant> expiresAtOf(Entity e) {
    if (!e.contains(EXPIRES_AT) || e.getValue(EXPIRES_AT).getType() != ValueType.TIMESTAMP) {
      return Optional.empty();
    }
    return Optional.of(toInstant(e.getTimestamp(EXPIRES_AT)));
  }

  /** This record as an entity under {@code key}. */
  Entity toEntity(Key key, boolean indexExpiresAt) {
    Entity.Builder b =
        Entity.newBuilder(key)
            .set(STATE, StringValue.newBuilder(state.name()).setExcludeFromIndexes(true).build())
            .set(FENCE, LongValue.newBuilder(fence).setExcludeFromIndexes(true).build())
            .set(
                LEASE_EXPIRY,
                TimestampValue.newBuilder(toTimestamp(leaseExpiry))
                    .setExcludeFromIndexes(true)
                    .build())
            .set(
                EXPIRES_AT,
                TimestampValue.newBuilder(toTimestamp(expiresAt))
                    .setExcludeFromIndexes(!indexExpiresAt)
                    .build());
    if (claimToken != null) {
      b.set(CLAIM_TOKEN, StringValue.newBuilder(claimToken).setExcludeFromIndexes(true).build());
    }
    if (fingerprint != null) {
      b.set(FINGERPRINT, StringValue.newBuilder(fingerprint).setExcludeFromIndexes(true).build());
    }
    return b.build();
  }

  /** The fence after a reclaim or release: one more, or 1 after {@link LockBackend#MAX_FENCE}. */
  long nextFence() {
    return fence >= LockBackend.MAX_FENCE ? 1 : fence + 1;
  }

  /** Whether a claim at {@code now} would find this record live (not reclaimable). */
  boolean liveAt(Instant now) {
    return state == LockState.CLAIMED ? now.isBefore(leaseExpiry) : now.isBefore(expiresAt);
  }

  static Timestamp toTimestamp(Instant instant) {
    return Timestamp.ofTimeMicroseconds(Math.multiplyExact(instant.toEpochMilli(), 1000L));
  }

  static Instant toInstant(Timestamp ts) {
    // Written at millisecond precision; truncate anything finer written by another tool.
    return Instant.ofEpochMilli(
        Math.floorDiv(ts.getSeconds() * 1_000_000L + ts.getNanos() / 1000, 1000L));
  }
}
