package dev.pubsubworker.runtime.pubsub;

/**
 * What a redrive did (or, in a dry run, would do) with the dead letters it read.
 *
 * @param subscriptionId the configured subscription it acted as
 * @param from the dead-letter subscription it read, {@code projects/P/subscriptions/S}
 * @param dryRun whether nothing was changed
 * @param read the dead letters read (each counted once, however often Pub/Sub delivered it)
 * @param redriven ran and succeeded (DONE), acked on the dead-letter subscription; in a dry run:
 *     would run
 * @param duplicates their key was already DONE: acked without running; in a dry run: would be
 * @param failedAgain failed again (an exception, a terminal failure, a store failure, a key held
 *     too long), nacked: left on the dead-letter subscription; in a dry run: messages without a
 *     key, which would fail again
 * @param terminal of {@code failedAgain}, the terminal failures (a poison exception, no key)
 * @param left read but not acted on: filtered out, or (dry run) every one not counted above;
 *     nacked, left on the dead-letter subscription
 */
public record RedriveSummary(
    String subscriptionId,
    String from,
    boolean dryRun,
    int read,
    int redriven,
    int duplicates,
    int failedAgain,
    int terminal,
    int left) {

  /** Whether every dead letter acted on succeeded or was a duplicate. */
  public boolean allDone() {
    return failedAgain == 0;
  }

  /** The one-line summary the command prints and the INFO line logs. */
  public String line() {
    if (dryRun) {
      return "redrive --dry-run of "
          + subscriptionId
          + " from "
          + from
          + ": "
          + read
          + " read, "
          + redriven
          + " would run, "
          + duplicates
          + " duplicate(s), "
          + failedAgain
          + " without a key, "
          + left
          + " left; nothing claimed, nothing acked";
    }
    return "redrive of "
        + subscriptionId
        + " from "
        + from
        + ": "
        + read
        + " read, "
        + redriven
        + " redriven, "
        + duplicates
        + " duplicate(s), "
        + failedAgain
        + " failed again ("
        + terminal
        + " terminal), "
        + left
        + " left";
  }
}
