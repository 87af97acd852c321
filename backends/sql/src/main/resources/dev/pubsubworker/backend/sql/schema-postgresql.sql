-- pubsub-worker lock table for PostgreSQL (9.5 or later; tested on 15).
--
-- One row per lock key (the state machine of docs/design.md). Times are epoch milliseconds on the DATABASE clock
-- (statement_timestamp()); the JVM's clock is never consulted. Run this file as it is, or with
-- your own table name in place of pubsub_worker_locks (every other identifier is derived from it),
-- or let SqlLockBackendSettings.createTableIfMissing(true) run it at start-up.
--
-- lock_key     the key as UTF-8 text, up to 1,024 bytes (checked by the backend before any I/O).
--              COLLATE "C": byte-wise equality and ordering, independent of the database locale.
--              PostgreSQL text cannot hold U+0000, so the backend rejects keys containing NUL.
--              Needs a UTF8 database (server_encoding) for keys outside ASCII.
-- state        'CLAIMED' or 'DONE'.
-- fence        fencing token: 1 on insert, +1 on every reclaim and every release.
-- lease_expiry when the current (or last) lease lapses.
-- expires_at   end of retention: leaseExpiry + ttl while CLAIMED, completion + ttl once DONE.
--              After it a claim starts over and purgeExpired may delete the row.
-- claim_token  the token of the claim that won (retry safety); NULL after a release.
-- fingerprint  optional payload fingerprint stored by the claim.
CREATE TABLE IF NOT EXISTS pubsub_worker_locks (
  lock_key     text COLLATE "C" NOT NULL,
  state        varchar(7)       NOT NULL,
  fence        bigint           NOT NULL,
  lease_expiry bigint           NOT NULL,
  expires_at   bigint           NOT NULL,
  claim_token  varchar(128),
  fingerprint  varchar(256),
  CONSTRAINT pubsub_worker_locks_pk PRIMARY KEY (lock_key),
  CONSTRAINT pubsub_worker_locks_state_ck CHECK (state IN ('CLAIMED', 'DONE'))
);

-- Makes purgeExpired an index range scan (expires_at <= now) instead of a full scan.
CREATE INDEX IF NOT EXISTS pubsub_worker_locks_expires_idx ON pubsub_worker_locks (expires_at);
