/**
 * The backend contract suite: what every {@link dev.pubsubworker.core.LockBackend} must pass, as
 * abstract JUnit 5 / jqwik classes a backend's test extends by supplying a {@link
 * dev.pubsubworker.testkit.BackendFixture}, plus {@link dev.pubsubworker.testkit.ManualTime} for
 * deterministic lease tests.
 *
 * <ul>
 *   <li>{@link dev.pubsubworker.testkit.LockBackendContract}: every row of the {@code LockBackend}
 *       transition table, invariants 1–7, and the store-level hazards (redelivery, crash, zombie,
 *       ...), by name.
 *   <li>{@link dev.pubsubworker.testkit.ConcurrencyFuzzContract}: many threads, many keys, random
 *       lock / mutex / crash; no overlap, exactly one effect per completed key.
 *   <li>{@link dev.pubsubworker.testkit.LockBackendModelContract}: random operation sequences
 *       checked against a reference model of the state machine.
 * </ul>
 */
package dev.pubsubworker.testkit;
