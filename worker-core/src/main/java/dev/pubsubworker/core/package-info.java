/**
 * The idempotency guard and the port every lock store implements.
 *
 * <p>Two audiences read this package:
 *
 * <ul>
 *   <li><b>Handler authors</b> use {@link dev.pubsubworker.core.IdempotencyGuard}: {@code lock(key,
 *       work)} runs the work at most once per key (a redelivery or republish is a {@link
 *       dev.pubsubworker.core.LockResult.Duplicate}); {@code mutex(key, work)} runs every work for
 *       a key one at a time. Contention is a {@link dev.pubsubworker.core.KeyInProgressException},
 *       so it can never be mistaken for success.
 *   <li><b>Backend authors</b> implement {@link dev.pubsubworker.core.LockBackend} (the four atomic
 *       verbs of the record state machine) and {@link dev.pubsubworker.core.LockAdmin} (inspect,
 *       forget, purge), and prove them with the contract suite in {@code worker-testkit}.
 * </ul>
 *
 * <p>Both can use the small shared helpers: {@link dev.pubsubworker.core.Backoff} (the one capped
 * exponential backoff, with none, full or equal jitter), {@link
 * dev.pubsubworker.core.DurationChecks} (one wording for a bad duration setting) and {@link
 * dev.pubsubworker.core.DurationText} (durations as a config writes them, for log lines).
 *
 * <p>This package depends on the JDK and the SLF4J API only: no store driver, no Google library, no
 * dependency-injection framework.
 */
@NullMarked
package dev.pubsubworker.core;

import org.jspecify.annotations.NullMarked;
