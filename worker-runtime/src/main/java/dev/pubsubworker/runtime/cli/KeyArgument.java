package dev.pubsubworker.runtime.cli;

import dev.pubsubworker.core.InvalidLockRecordException;
import dev.pubsubworker.core.LockRecord;
import dev.pubsubworker.runtime.config.SubscriptionConfig;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.store.LockStore;
import java.io.PrintWriter;
import java.util.Optional;
import picocli.CommandLine;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/**
 * The key argument of {@code inspect} and {@code forget}: either the key as the worker stores it
 * ({@code orders:po-7}: the subscription's key namespace, a colon, the resolved key), or, with
 * {@code --subscription ID}, the resolved key alone ({@code --subscription orders po-7}), which is
 * put under that subscription's namespace.
 */
final class KeyArgument {

  @Parameters(
      index = "0",
      paramLabel = "KEY",
      description =
          "The key as stored: NAMESPACE:KEY, e.g. orders:po-123 (the namespace is the"
              + " subscription's key-namespace, by default its id); with --subscription, the key"
              + " alone.")
  String key;

  @Option(
      names = {"-s", "--subscription"},
      paramLabel = "ID",
      description =
          "Put KEY under this subscription's key namespace (an entry under subscriptions).")
  String subscription;

  /**
   * The key as the lock store holds it.
   *
   * @throws ParameterException when {@code --subscription} names no configured subscription
   */
  String storedKey(WorkerConfig config, CommandLine commandLine) {
    if (subscription == null) {
      return key;
    }
    SubscriptionConfig s = config.subscriptions().get(subscription);
    if (s == null) {
      throw new ParameterException(
          commandLine,
          "--subscription "
              + subscription
              + " is not configured; subscriptions: "
              + String.join(", ", config.subscriptions().keySet().stream().sorted().toList()));
    }
    return s.storedKey(key);
  }

  /**
   * What the store holds for the key: a record, one the backend cannot read (shown as stored, and
   * forgotten like any other), or nothing.
   *
   * @param record the readable record, if there is one
   * @param unreadable the backend's error for an unreadable record, carrying its stored fields
   */
  record Found(Optional<LockRecord> record, Optional<InvalidLockRecordException> unreadable) {
    /** Whether the key has no record at all. */
    boolean absent() {
      return record.isEmpty() && unreadable.isEmpty();
    }
  }

  /** What a command does with the key's record, once the store has been read. */
  @FunctionalInterface
  interface RecordAction {
    /**
     * @param key the key as stored
     * @param found what the store holds for it
     * @return the command's exit code
     */
    int apply(LockStore store, String key, Found found);
  }

  /**
   * The shared path of {@code inspect} and {@code forget}: refuse an empty key (exit 2), load the
   * config, put the key under its namespace, open the store, read the record (readable or not) and
   * hand it to {@code action}. A bad config or key is one line with exit 2, a store failure (also
   * inside {@code action}) one line naming the store with exit 3.
   *
   * @throws ParameterException for an unknown {@code --subscription} (picocli prints it, exit 2)
   */
  int withRecord(StoreOptions options, CommandLine commandLine, RecordAction action) {
    PrintWriter err = commandLine.getErr();
    if (key.isEmpty()) {
      return Failures.badArgument(err, "KEY must not be empty");
    }
    WorkerConfig config;
    String stored;
    try {
      config = options.config.load();
      stored = storedKey(config, commandLine);
    } catch (ParameterException e) {
      throw e;
    } catch (RuntimeException e) {
      return Failures.report(e, err, options.verbose);
    }
    try (LockStore store = LockStore.of(config)) {
      Found found;
      try {
        found = new Found(store.admin().inspect(stored), Optional.empty());
      } catch (IllegalArgumentException e) {
        return Failures.badArgument(err, "KEY: " + e.getMessage());
      } catch (InvalidLockRecordException e) {
        found = new Found(Optional.empty(), Optional.of(e));
      }
      return action.apply(store, stored, found);
    } catch (RuntimeException e) {
      return Failures.report(e, err, options.verbose, config.lockStore());
    }
  }
}
