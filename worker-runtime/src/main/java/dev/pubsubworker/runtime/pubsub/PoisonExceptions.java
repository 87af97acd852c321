package dev.pubsubworker.runtime.pubsub;

import com.google.api.core.InternalApi;
import com.typesafe.config.ConfigValue;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.pubsub.TerminalFailures;
import dev.pubsubworker.runtime.config.ConfigProblem;
import dev.pubsubworker.runtime.config.InvalidConfigException;
import dev.pubsubworker.runtime.config.SubscriptionConfig;
import dev.pubsubworker.runtime.config.WorkerConfig;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Each subscription's {@code poison-exceptions}, resolved into the {@link TerminalFailures} its
 * receiver dead-letters after one attempt: {@code PoisonMessageException} and the listed classes.
 */
@InternalApi("resolves poison-exceptions for Worker")
public final class PoisonExceptions {

  private PoisonExceptions() {}

  /**
   * Resolves every subscription's {@code poison-exceptions} through the class loader of the
   * subscription's handler (so a plugin jar's own exception classes are found).
   *
   * @param config the settings
   * @param handlers the handlers by name; every subscription's must be among them
   * @return each subscription's terminal failures, by subscription id
   * @throws InvalidConfigException naming the setting for every class that does not exist or is not
   *     a {@link Throwable}
   */
  public static Map<String, TerminalFailures> resolve(
      WorkerConfig config, Map<String, MessageHandler> handlers) {
    Set<ConfigProblem> problems = new LinkedHashSet<>();
    Map<String, TerminalFailures> result = new LinkedHashMap<>();
    for (SubscriptionConfig s : config.orderedSubscriptions()) {
      MessageHandler handler = handlers.get(s.handler());
      ClassLoader loader =
          handler == null || handler.getClass().getClassLoader() == null
              ? PoisonExceptions.class.getClassLoader()
              : handler.getClass().getClassLoader();
      List<Class<? extends Throwable>> classes = new ArrayList<>();
      for (String name : s.failures().poisonExceptions()) {
        String problem = null;
        try {
          Class<?> type = Class.forName(name, false, loader);
          if (Throwable.class.isAssignableFrom(type)) {
            classes.add(type.asSubclass(Throwable.class));
          } else {
            problem = "lists " + name + ", which is not an exception (a Throwable)";
          }
        } catch (ClassNotFoundException | LinkageError e) {
          problem =
              "lists "
                  + name
                  + ", a class that the handler '"
                  + s.handler()
                  + "' cannot load (not on its plugin's class path)";
        }
        if (problem != null) {
          problems.add(problem(config, s, problem));
        }
      }
      result.put(s.id(), TerminalFailures.of(classes));
    }
    if (!problems.isEmpty()) {
      throw new InvalidConfigException(List.copyOf(problems));
    }
    return Collections.unmodifiableMap(result);
  }

  /** The problem under the subscription's own setting, or the defaults' when it inherits it. */
  private static ConfigProblem problem(WorkerConfig config, SubscriptionConfig s, String problem) {
    String own = WorkerConfig.ROOT + ".subscriptions." + s.id() + ".poison-exceptions";
    String path =
        config.source().hasPath(own)
            ? own
            : WorkerConfig.ROOT + ".subscription-defaults.poison-exceptions";
    ConfigValue value = config.source().hasPath(path) ? config.source().getValue(path) : null;
    String origin = "";
    if (value != null && value.origin().filename() != null) {
      origin = value.origin().filename() + ":" + value.origin().lineNumber();
    } else if (value != null) {
      origin = value.origin().description();
    }
    return new ConfigProblem(path, problem, origin);
  }
}
