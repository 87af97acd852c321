package dev.pubsubworker.backend.datastore;

import com.google.cloud.Timestamp;
import com.google.cloud.datastore.Entity;
import com.google.cloud.datastore.Key;
import com.google.cloud.datastore.LongValue;
import com.google.cloud.datastore.StringValue;
import com.google.cloud.datastore.TimestampValue;
import dev.pubsubworker.core.LockState;
import java.time.Instant;

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

  /**
   * Reads a lock entity.
   *
   * @throws IllegalStateException if the entity lacks a property or has one of another type (an
   *     entity of the kind that this backend did not write)
   */
  static StoredRecord fromEntity(Entity e) {
    try {
      return new StoredRecord(
          LockState.valueOf(e.getString(STATE)),
          e.getLong(FENCE),
          toInstant(e.getTimestamp(LEASE_EXPIRY)),
          toInstant(e.getTimestamp(EXPIRES_AT)),
          e.contains(CLAIM_TOKEN) ? e.getString(CLAIM_TOKEN) : null,
          e.contains(FINGERPRINT) ? e.getString(FINGERPRINT) : null);
    } catch (RuntimeException bad) {
      throw new IllegalStateException(
          "entity of kind '" + e.getKey().getKind() + "' is not a lock record: " + bad, bad);
    }
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
