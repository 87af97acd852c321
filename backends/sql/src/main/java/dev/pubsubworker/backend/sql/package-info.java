/**
 * The SQL lock backend: {@link dev.pubsubworker.backend.sql.SqlLockBackend} on a table in
 * PostgreSQL, MariaDB/MySQL or H2 ({@link dev.pubsubworker.backend.sql.SqlDialect}), configured by
 * {@link dev.pubsubworker.backend.sql.SqlLockSettings}. Expiry is judged on the database's clock;
 * the DDL for each dialect is in this package's resources. Everything else here is package-private.
 */
package dev.pubsubworker.backend.sql;
