-- pubsub-worker lock table for H2 (2.x; tested on 2.3).
--
-- One row per lock key (the state machine of docs/design.md). Times are epoch milliseconds on the DATABASE clock
-- (CURRENT_TIMESTAMP(3)); the JVM's clock is never consulted (for an embedded H2 they coincide).
-- Run this file as it is, or with your own table name in place of pubsub_worker_locks (every other
-- identifier is derived from it), or let SqlLockBackendSettings.createTableIfMissing(true) run it.
--
-- lock_key     the key, up to 1,024 UTF-8 bytes (checked by the backend before any I/O); H2
--              compares VARCHAR values exactly unless the database was created with IGNORECASE.
-- state        'CLAIMED' or 'DONE'.
-- fence        fencing token: 1 on insert, +1 on every reclaim and every release.
-- lease_expiry when the current (or last) lease lapses.
-- expires_at   end of retention: leaseExpiry + ttl while CLAIMED, completion + ttl once DONE.
--              After it a claim starts over and purgeExpired may delete the row.
-- claim_token  the token of the claim that won (retry safety); NULL after a release.
-- fingerprint  optional payload fingerprint stored by the claim.
CREATE TABLE IF NOT EXISTS pubsub_worker_locks (
  lock_key     VARCHAR(1024) NOT NULL,
  state        VARCHAR(7)    NOT NULL,
  fence        BIGINT        NOT NULL,
  lease_expiry BIGINT        NOT NULL,
  expires_at   BIGINT        NOT NULL,
  claim_token  VARCHAR(128),
  fingerprint  VARCHAR(256),
  CONSTRAINT pubsub_worker_locks_pk PRIMARY KEY (lock_key),
  CONSTRAINT pubsub_worker_locks_state_ck CHECK (state IN ('CLAIMED', 'DONE'))
);

-- Makes purgeExpired an index range scan (expires_at <= now) instead of a full scan.
CREATE INDEX IF NOT EXISTS pubsub_worker_locks_expires_idx ON pubsub_worker_locks (expires_at);
