package dev.pubsubworker.runtime.pubsub;

import java.util.Optional;

/**
 * What a redrive did (or, in a dry run, would do) with the dead letters it read.
 *
 * @param subscriptionId the configured subscription it acted as
 * @param from the dead-letter subscription it read, {@code projects/P/subscriptions/S}
 * @param dryRun whether nothing was changed
 * @param topic the topic letters were republished to, {@code projects/P/topics/T}; empty when they
 *     were processed
 * @param read the dead letters read (each counted once, however often Pub/Sub delivered it)
 * @param redriven ran and succeeded (DONE), acked on the dead-letter subscription; republished:
 *     Pub/Sub accepted the publish, acked; in a dry run: would run, or would be republished
 * @param duplicates their key was already DONE: acked without running; in a dry run: would be
 * @param forgotten of {@code redriven} (and of {@code failedAgain}), the letters whose DONE record
 *     was forgotten first, so their effect ran again; in a dry run: would be
 * @param failedAgain failed again (an exception, a terminal failure, a store failure, a key held
 *     too long, a publish Pub/Sub refused), nacked: left on the dead-letter subscription; in a dry
 *     run: messages without a key, which would fail again
 * @param terminal of {@code failedAgain}, the terminal failures (a poison exception, no key)
 * @param left read but not acted on: filtered out, or (dry run) every one not counted above;
 *     nacked, left on the dead-letter subscription
 */
public record RedriveSummary(
    String subscriptionId,
    String from,
    boolean dryRun,
    Optional<String> topic,
    int read,
    int redriven,
    int duplicates,
    int forgotten,
    int failedAgain,
    int terminal,
    int left) {

  /** Whether every dead letter acted on succeeded or was a duplicate. */
  public boolean allDone() {
    return failedAgain == 0;
  }

  /** The one-line summary the command prints and the INFO line logs. */
  public String line() {
    StringBuilder b = new StringBuilder("redrive");
    if (topic.isPresent()) {
      b.append(" --republish");
    }
    if (dryRun) {
      b.append(" --dry-run");
    }
    b.append(" of ").append(subscriptionId).append(" from ").append(from);
    if (topic.isPresent()) {
      b.append(" to ").append(topic.get());
    }
    b.append(": ").append(read).append(" read, ");
    if (topic.isPresent()) {
      b.append(redriven).append(dryRun ? " would be republished, " : " republished, ");
      if (!dryRun) {
        b.append(failedAgain).append(" failed again, ");
      }
      b.append(left).append(" left");
      return b.append(dryRun ? "; nothing published, nothing acked" : "").toString();
    }
    if (dryRun) {
      b.append(redriven).append(" would run");
      if (forgotten > 0) {
        b.append(" (").append(forgotten).append(" after forgetting their DONE record)");
      }
      return b.append(", ")
          .append(duplicates)
          .append(" duplicate(s), ")
          .append(failedAgain)
          .append(" without a key, ")
          .append(left)
          .append(" left; nothing claimed, nothing acked")
          .toString();
    }
    b.append(redriven).append(" redriven, ");
    b.append(duplicates).append(" duplicate(s), ");
    if (forgotten > 0) {
      b.append(forgotten).append(" forgotten first, ");
    }
    return b.append(failedAgain)
        .append(" failed again (")
        .append(terminal)
        .append(" terminal), ")
        .append(left)
        .append(" left")
        .toString();
  }
}
