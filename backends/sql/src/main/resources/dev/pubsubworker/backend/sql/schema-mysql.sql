-- pubsub-worker lock table for MariaDB (10.5 or later; tested on 10.11) and MySQL (8.0 or later).
--
-- One row per lock key (the state machine of docs/design.md). Times are epoch milliseconds on the DATABASE clock
-- (UTC_TIMESTAMP(3), independent of the session time zone); the JVM's clock is never consulted.
-- Run this file as it is, or with your own table name in place of pubsub_worker_locks (every other
-- identifier is derived from it), or let SqlLockBackendSettings.createTableIfMissing(true) run it.
--
-- lock_key     the key's UTF-8 bytes, up to 1,024 (checked by the backend before any I/O).
--              VARBINARY, not VARCHAR: byte-wise equality (no case folding, no trailing-space
--              padding of PAD SPACE collations) and 1,024 bytes fit InnoDB's 3,072-byte index limit,
--              whereas VARCHAR(1024) in utf8mb4 would need 4,096. Needs ROW_FORMAT=DYNAMIC (the
--              default since MariaDB 10.2 and MySQL 5.7); COMPACT limits index keys to 767 bytes.
-- state        'CLAIMED' or 'DONE'.
-- fence        fencing token: 1 on insert, +1 on every reclaim and every release.
-- lease_expiry when the current (or last) lease lapses.
-- expires_at   end of retention: leaseExpiry + ttl while CLAIMED, completion + ttl once DONE.
--              After it a claim starts over and purgeExpired may delete the row.
-- claim_token  the token of the claim that won (retry safety); NULL after a release.
-- fingerprint  optional payload fingerprint stored by the claim.
CREATE TABLE IF NOT EXISTS pubsub_worker_locks (
  lock_key     VARBINARY(1024) NOT NULL,
  state        VARCHAR(7) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  fence        BIGINT NOT NULL,
  lease_expiry BIGINT NOT NULL,
  expires_at   BIGINT NOT NULL,
  claim_token  VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NULL,
  fingerprint  VARCHAR(256) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  PRIMARY KEY (lock_key),
  -- Makes purgeExpired an index range scan (expires_at <= now) instead of a full scan.
  INDEX pubsub_worker_locks_expires_idx (expires_at)
) ENGINE = InnoDB ROW_FORMAT = DYNAMIC;
