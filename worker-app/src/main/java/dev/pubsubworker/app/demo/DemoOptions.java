package dev.pubsubworker.app.demo;

import java.time.Duration;
import java.util.Optional;

/**
 * What the demo does.
 *
 * @param messages distinct orders to publish
 * @param duplicates share of orders published a second time (same order, new message id), 0..1
 * @param failures share of orders whose first placement fails (nack, redelivery), 0..1
 * @param crashes share of orders a crashed worker claimed and abandoned before delivery, 0..1
 * @param backend the lock store
 * @param storeUrl where the Redis or PostgreSQL store is, when not the local default
 * @param timeout how long to wait for every order to be placed
 * @param pubsub where Pub/Sub comes from: the embedded server, Google's emulator, a running one
 * @param datastoreEmulatorHost a running Datastore emulator to use instead of starting one
 * @param interactive whether the progress line rewrites itself (a terminal) or prints lines
 */
public record DemoOptions(
    int messages,
    double duplicates,
    double failures,
    double crashes,
    DemoBackend backend,
    Optional<String> storeUrl,
    Duration timeout,
    DemoPubSub pubsub,
    Optional<String> datastoreEmulatorHost,
    boolean interactive) {

  /**
   * Validates the shares and counts.
   *
   * @throws IllegalArgumentException naming the option and the value
   */
  public DemoOptions {
    if (messages < 1 || messages > 1_000_000) {
      throw new IllegalArgumentException("--messages must be 1..1000000, but was " + messages);
    }
    requireShare("--duplicates", duplicates);
    requireShare("--failures", failures);
    requireShare("--crashes", crashes);
    java.util.Objects.requireNonNull(pubsub, "pubsub");
  }

  private static void requireShare(String option, double value) {
    if (!(value >= 0 && value <= 1)) {
      throw new IllegalArgumentException(option + " must be a share 0..1, but was " + value);
    }
  }
}
