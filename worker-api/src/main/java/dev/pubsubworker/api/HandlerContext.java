package dev.pubsubworker.api;

import java.util.Optional;
import java.util.OptionalLong;

/** What a handler knows about the run it is in. Valid only while the handler runs; thread-safe. */
public interface HandlerContext {

  /** The subscription's id (its entry name under {@code subscriptions}). */
  String subscription();

  /**
   * The idempotency key this message runs under, as the lock store holds it: the subscription's key
   * namespace, a colon, and the key resolved from the message (e.g. {@code orders:po-7}), the key
   * its fencing token belongs to; empty when it runs unguarded ({@code guard = none}, or an unkeyed
   * message with {@code allow-unguarded}).
   */
  Optional<String> key();

  /**
   * The claim's fencing token: strictly higher than any earlier claim's on the key. Pass it to a
   * sink that can refuse lower tokens than it has seen, so a zombie's late write is harmless. Empty
   * when unguarded.
   */
  OptionalLong fencingToken();

  /**
   * Whether the claim's lease is known lost (another claim took the key, or the lock store was
   * unreachable until it ran out). Always false when unguarded.
   */
  boolean isLeaseLost();

  /**
   * Throws if the lease is lost; call it before an irreversible step.
   *
   * @throws dev.pubsubworker.core.LeaseLostException if it is
   */
  void checkLease();

  /**
   * A resource of the run, such as the {@code java.sql.Connection} of the SQL lock store's
   * transaction when the subscription is {@code transactional}: writes made through it commit or
   * roll back together with the DONE record.
   */
  <R> Optional<R> resource(Class<R> type);
}
