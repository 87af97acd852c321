package dev.pubsubworker.runtime.cli;

import dev.pubsubworker.runtime.config.SubscriptionConfig;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.pubsub.EmulatorResources;
import dev.pubsubworker.runtime.pubsub.EmulatorResources.Result;
import dev.pubsubworker.runtime.pubsub.EmulatorResources.State;
import dev.pubsubworker.runtime.pubsub.EmulatorResources.Wanted;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.regex.Pattern;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code create-resources --config FILE --topic TOPIC}: creates on a Pub/Sub emulator what the
 * config's subscriptions need, for a local set-up without the Google Cloud CLI ({@link
 * EmulatorResources}): each subscription's topic (from {@code --topic}), its {@code
 * dead-letter-topic}, the subscription with a dead-letter policy on that topic, and its {@code
 * dead-letter-subscription}. Prints one line per resource: created, exists, or mismatch (exists in
 * another form, left as it is).
 *
 * <p>Only against an emulator: a config without {@code pubsub-emulator-host} (nor {@code
 * PUBSUB_EMULATOR_HOST}) points at Google Cloud, and the command refuses it with one line and exit
 * 2 before connecting anywhere. Exits 0 when every resource was created or existed as asked, 2 on a
 * mismatch or bad input, 3 when the emulator cannot be reached.
 */
@Command(
    name = "create-resources",
    mixinStandardHelpOptions = true,
    versionProvider = WorkerCli.Version.class,
    description =
        "Create on a Pub/Sub emulator the topics, subscriptions and dead-letter policies the"
            + " config names (never on Google Cloud); what exists is left as it is.")
final class CreateResourcesCommand implements Callable<Integer> {

  /** How long the emulator may take to answer every call, in all. */
  static final Duration TIMEOUT = Duration.ofSeconds(30);

  private static final Pattern TOPIC_PATH = Pattern.compile("projects/[^/]+/topics/[^/]+");

  @Spec CommandSpec spec;

  @Mixin ConfigSource config;

  @Option(names = "--verbose", description = "Print stack traces of errors.")
  boolean verbose;

  @Option(
      names = {"-t", "--topic"},
      paramLabel = "[ID=]TOPIC",
      required = true,
      description =
          "The topic a subscription reads: a topic id in project-id or projects/P/topics/T. TOPIC"
              + " alone when the config has one subscription, else ID=TOPIC for each (ID: the"
              + " subscription's id under subscriptions).")
  List<String> topics = new ArrayList<>();

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    WorkerConfig settings;
    try {
      settings = config.load();
    } catch (RuntimeException e) {
      return Failures.report(e, err, verbose);
    }
    if (settings.pubsubEmulatorHost().isEmpty()) {
      return Failures.badArgument(
          err,
          "create-resources works only on a Pub/Sub emulator, and this config points at Google"
              + " Cloud (project "
              + settings.projectId()
              + "): set "
              + WorkerConfig.ROOT
              + ".pubsub-emulator-host or PUBSUB_EMULATOR_HOST, or create Google Cloud resources"
              + " with gcloud or Terraform");
    }
    String host = settings.pubsubEmulatorHost().get();
    List<Wanted> wanted;
    try {
      wanted = wanted(settings);
    } catch (IllegalArgumentException e) {
      return Failures.badArgument(err, e.getMessage());
    }
    List<Result> results;
    try {
      results =
          EmulatorResources.create(
              host,
              wanted,
              TIMEOUT,
              r -> {
                out.println(r.line());
                out.flush();
              });
    } catch (IllegalArgumentException e) {
      return Failures.badArgument(err, e.getMessage());
    } catch (EmulatorResources.EmulatorUnavailableException e) {
      err.println("error: " + e.getMessage());
      if (verbose) {
        e.printStackTrace(err);
      }
      err.flush();
      return ExitCodes.UNAVAILABLE;
    } catch (CancellationException e) {
      return Failures.report(e, err, verbose);
    }
    long mismatches = results.stream().filter(r -> r.state() == State.MISMATCH).count();
    if (mismatches > 0) {
      return Failures.badArgument(
          err,
          mismatches
              + " resource(s) exist in another form than the config and --topic ask for (mismatch"
              + " above) and were left as they are");
    }
    return ExitCodes.OK;
  }

  /**
   * The config's subscriptions, each with its topic from {@code --topic}.
   *
   * @throws IllegalArgumentException naming the {@code --topic} problem
   */
  private List<Wanted> wanted(WorkerConfig settings) {
    Map<String, SubscriptionConfig> subscriptions = settings.subscriptions();
    List<String> ids = List.copyOf(subscriptions.keySet());
    if (ids.isEmpty()) {
      throw new IllegalArgumentException(
          "the config names no subscriptions (" + WorkerConfig.ROOT + ".subscriptions)");
    }
    Map<String, String> topicById = new LinkedHashMap<>();
    for (String t : topics) {
      int eq = t.indexOf('=');
      if (eq < 0) {
        if (ids.size() != 1 || topics.size() != 1) {
          throw new IllegalArgumentException(
              "--topic "
                  + t
                  + ": give --topic ID=TOPIC for each subscription when the config has more than"
                  + " one (it has "
                  + String.join(", ", ids)
                  + ")");
        }
        topicById.put(ids.get(0), topicPath(settings.projectId(), t, t));
        continue;
      }
      String id = t.substring(0, eq);
      if (!ids.contains(id)) {
        throw new IllegalArgumentException(
            "--topic "
                + t
                + ": no subscription '"
                + id
                + "' in the config (it has "
                + String.join(", ", ids)
                + ")");
      }
      if (topicById.put(id, topicPath(settings.projectId(), t.substring(eq + 1), t)) != null) {
        throw new IllegalArgumentException("--topic: subscription " + id + " is given twice");
      }
    }
    List<String> missing = ids.stream().filter(id -> !topicById.containsKey(id)).toList();
    if (!missing.isEmpty()) {
      throw new IllegalArgumentException(
          "--topic: no topic for subscription(s) "
              + String.join(", ", missing)
              + "; give --topic ID=TOPIC for each");
    }
    List<Wanted> wanted = new ArrayList<>();
    subscriptions.forEach(
        (id, s) -> wanted.add(Wanted.of(s, settings.projectId(), topicById.get(id))));
    return wanted;
  }

  /** A topic id in {@code projectId} or a full path, as a full path. */
  private static String topicPath(String projectId, String topic, String option) {
    if (topic.startsWith("projects/")) {
      if (!TOPIC_PATH.matcher(topic).matches()) {
        throw new IllegalArgumentException(
            "--topic " + option + ": a topic is an id or projects/P/topics/T");
      }
      return topic;
    }
    if (topic.isEmpty() || topic.contains("/")) {
      throw new IllegalArgumentException(
          "--topic " + option + ": a topic is an id or projects/P/topics/T");
    }
    return "projects/" + projectId + "/topics/" + topic;
  }
}
