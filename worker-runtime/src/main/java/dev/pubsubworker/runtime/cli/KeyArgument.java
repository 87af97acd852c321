package dev.pubsubworker.runtime.cli;

import dev.pubsubworker.runtime.config.SubscriptionConfig;
import dev.pubsubworker.runtime.config.WorkerConfig;
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
}
