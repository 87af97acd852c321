package dev.pubsubworker.app;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigRenderOptions;
import com.typesafe.config.ConfigResolveOptions;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueFactory;
import dev.pubsubworker.runtime.cli.ExitCodes;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.plugin.PluginLoader;
import dev.pubsubworker.runtime.worker.Worker;
import dev.pubsubworker.testservices.PubSubEmulator;
import dev.pubsubworker.testservices.SubscriptionFixture;
import dev.pubsubworker.testservices.SubscriptionSpec;
import dev.pubsubworker.testservices.TestServices;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Mutants of the sample configs — each setting dropped, retyped, misspelled, out of range, empty or
 * huge — through {@code check-config}: every one ends in a bounded time with either "config OK"
 * (exit 0) or exit 2 and one plain line per problem; never a stack trace, a Guice dump, an
 * exception class name or a hang. Accepted mutants build a worker, and a sample of them starts and
 * stops one against the Pub/Sub emulator: what {@code check-config} accepts, {@code run} does not
 * refuse for the config's sake.
 */
class ConfigMutationTest {

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final Pattern PROBLEM_LINE =
      Pattern.compile("  (\"?[A-Za-z0-9_.-]+\"?)+(\\.\"[^\"]*\")*[A-Za-z0-9_.-]*: \\S.*");
  private static final ExecutorService CALLS = Executors.newSingleThreadExecutor();

  @TempDir Path dir;

  private record Mutant(String name, Config config) {}

  private record Outcome(int exitCode, String out, String err) {}

  @AfterAll
  static void stopCalls() {
    CALLS.shutdownNow();
  }

  /**
   * A sample config, with the environment it expects fixed (a project id) and no plugins folder: in
   * this JVM the example plugin is on the class path already.
   */
  private static Config base(String sample) {
    Config parsed = ConfigFactory.parseFile(ROOT.resolve("config").resolve(sample).toFile());
    return ConfigFactory.parseString("pubsub-worker.project-id = sample-project")
        .withFallback(parsed)
        .resolve(ConfigResolveOptions.noSystem())
        .withoutPath("pubsub-worker.plugins-dir");
  }

  private static final Map<String, ConfigValue> VALUES = new LinkedHashMap<>();

  static {
    VALUES.put("empty", ConfigValueFactory.fromAnyRef(""));
    VALUES.put("word", ConfigValueFactory.fromAnyRef("not-a-value"));
    VALUES.put("object", ConfigValueFactory.fromMap(Map.of("x", 1)));
    VALUES.put("list", ConfigValueFactory.fromIterable(List.of(1, 2)));
    VALUES.put("bare-number", ConfigValueFactory.fromAnyRef(5));
    VALUES.put("negative", ConfigValueFactory.fromAnyRef(-1));
    VALUES.put("zero", ConfigValueFactory.fromAnyRef(0));
    VALUES.put("beyond-long", ConfigValueFactory.fromAnyRef("99999999999999999999999"));
    VALUES.put("huge-int", ConfigValueFactory.fromAnyRef(100000));
    VALUES.put("huge-duration", ConfigValueFactory.fromAnyRef("999999999d"));
    VALUES.put("huge-size", ConfigValueFactory.fromAnyRef("900000000000PiB"));
    VALUES.put("boolean", ConfigValueFactory.fromAnyRef(true));
    VALUES.put("null", ConfigValueFactory.fromAnyRef(null));
    VALUES.put("long-text", ConfigValueFactory.fromAnyRef("x".repeat(10_000)));
    VALUES.put("bad-port", ConfigValueFactory.fromAnyRef("127.0.0.1:99999"));
  }

  /** Every setting a user can write: reference.conf's leaves, and each default per subscription. */
  private static List<String> settings(Config base) {
    Config reference =
        ConfigFactory.defaultReference().getConfig(WorkerConfig.ROOT).withoutPath("plugins");
    TreeSet<String> paths = new TreeSet<>();
    for (Map.Entry<String, ConfigValue> e : reference.entrySet()) {
      paths.add(WorkerConfig.ROOT + "." + e.getKey());
      if (e.getKey().startsWith("subscription-defaults.")) {
        paths.add(
            WorkerConfig.ROOT
                + ".subscriptions.orders."
                + e.getKey().substring("subscription-defaults.".length()));
      }
    }
    for (Map.Entry<String, ConfigValue> e : base.entrySet()) {
      paths.add(e.getKey());
    }
    return new ArrayList<>(paths);
  }

  private static List<Mutant> mutants(String sample, Config base) {
    List<Mutant> mutants = new ArrayList<>();
    for (String path : settings(base)) {
      if (base.hasPath(path)) {
        mutants.add(new Mutant(sample + ": drop " + path, base.withoutPath(path)));
        String misspelled = path + "x";
        mutants.add(
            new Mutant(
                sample + ": misspell " + path,
                base.withoutPath(path).withValue(misspelled, base.getValue(path))));
      }
      for (Map.Entry<String, ConfigValue> v : VALUES.entrySet()) {
        mutants.add(
            new Mutant(
                sample + ": " + path + " = " + v.getKey(), base.withValue(path, v.getValue())));
      }
    }
    Config root = base.getConfig(WorkerConfig.ROOT);
    mutants.add(
        new Mutant(
            sample + ": root misspelled",
            ConfigFactory.empty().withValue("pubsub-workr", root.root())));
    mutants.add(
        new Mutant(
            sample + ": another root key",
            base.withValue("akka.loglevel", ConfigValueFactory.fromAnyRef("DEBUG"))));
    mutants.add(
        new Mutant(
            sample + ": unknown plugin setting",
            base.withValue(
                "pubsub-worker.plugins.orders-example.max-quantty",
                ConfigValueFactory.fromAnyRef(5))));
    mutants.add(
        new Mutant(
            sample + ": settings of a plugin that is not there",
            base.withValue(
                "pubsub-worker.plugins.billing.currency", ConfigValueFactory.fromAnyRef("EUR"))));
    mutants.add(
        new Mutant(
            sample + ": plugins not an object",
            base.withValue("pubsub-worker.plugins", ConfigValueFactory.fromAnyRef(3))));
    return mutants;
  }

  private Path write(Mutant m) throws IOException {
    Path file = dir.resolve("mutant.conf");
    Files.writeString(
        file,
        m.config()
            .root()
            .render(ConfigRenderOptions.defaults().setOriginComments(false).setJson(false)));
    return file;
  }

  private static Outcome checkConfig(Path file) throws Exception {
    Future<CliRun> call =
        CALLS.submit(() -> CliRun.of("check-config", "--config", file.toString()));
    try {
      CliRun run = call.get(30, TimeUnit.SECONDS);
      return new Outcome(run.exitCode(), run.out(), run.err());
    } catch (TimeoutException e) {
      call.cancel(true);
      throw new AssertionError("check-config did not finish within 30 s on " + file);
    }
  }

  /** Exit 0 with "config OK", or exit 2 with a header and one plain line per problem. */
  private static void assertClean(String name, Outcome o) {
    String all = o.out() + o.err();
    assertThat(all)
        .as(name)
        .doesNotContain("\tat ")
        // No exception's text; the example class name in poison-exceptions' own problem is fine.
        .doesNotContainPattern("(?<!com\\.example\\.BadPayload)Exception")
        .doesNotContain("Guice")
        .doesNotContain("com.google.inject")
        .doesNotContain("java.lang");
    if (o.exitCode() == 0) {
      assertThat(o.out()).as(name).startsWith("config OK");
      assertThat(o.err()).as(name).isEmpty();
      return;
    }
    assertThat(o.exitCode()).as(name + "\n" + o.err()).isEqualTo(ExitCodes.BAD_CONFIG);
    // A huge value is not echoed back whole: each problem stays a readable line.
    assertThat(o.err()).as(name).doesNotContain("x".repeat(1000));
    List<String> lines = o.err().lines().toList();
    assertThat(lines.get(0))
        .as(name)
        .matches("error: (1 configuration problem|[2-9] configuration problems)");
    int count = Integer.parseInt(lines.get(0).replaceAll("\\D", ""));
    assertThat(lines.subList(1, lines.size())).as(name).hasSize(count);
    for (String line : lines.subList(1, lines.size())) {
      assertThat(line).as(name).matches(PROBLEM_LINE);
    }
    // One mutation, one mistake: a second line only where the first hides a setting another
    // one needs (a misspelled lock-store.type, say, leaves transactional without its sql store).
    assertThat(count).as(name + "\n" + o.err()).isLessThanOrEqualTo(2);
  }

  @Test
  void every_mutant_of_the_sample_configs_is_refused_in_one_line_each_or_accepted()
      throws Exception {
    // Every mutant of local.conf would be ~1,000 (40 s); a fixed sample of them and of the other
    // samples keeps the run short, and the cases the issue names are always in.
    List<Mutant> candidates = new ArrayList<>(mutants("local.conf", base("local.conf")));
    for (String sample :
        List.of("redis-memorystore.conf", "postgres-cloudsql.conf", "gke-datastore.conf")) {
      candidates.addAll(mutants(sample, base(sample)));
    }
    java.util.Collections.shuffle(candidates, new Random(14));
    List<String> named =
        List.of(
            "local.conf: pubsub-worker.subscription-defaults.lease = bare-number",
            "local.conf: pubsub-worker.subscriptions.orders.lease = bare-number",
            "local.conf: pubsub-worker.subscription-defaults.parallel-pull-count = huge-int",
            "local.conf: pubsub-worker.pubsub-emulator-host = bad-port",
            "local.conf: pubsub-worker.lock-store.sql.jdbc-url = word",
            "local.conf: root misspelled",
            "local.conf: unknown plugin setting",
            "local.conf: settings of a plugin that is not there");
    List<Mutant> all = new ArrayList<>();
    for (Mutant m : candidates) {
      if (all.size() < 400 || named.contains(m.name())) {
        all.add(m);
      }
    }
    assertThat(all.stream().map(Mutant::name)).containsAll(named);
    assertThat(all.size()).isGreaterThan(300);

    int refused = 0;
    List<Mutant> accepted = new ArrayList<>();
    for (Mutant m : all) {
      Outcome o = checkConfig(write(m));
      assertClean(m.name(), o);
      if (o.exitCode() == 0) {
        accepted.add(m);
        // What check-config accepts builds a worker.
        WorkerConfig settings = WorkerConfig.loadFile(write(m), getClass().getClassLoader());
        Worker.newBuilder(settings)
            .plugins(PluginLoader.load(settings, getClass().getClassLoader()))
            .build();
      } else {
        refused++;
        if (m.name().contains(": misspell ")) {
          assertThat(o.err()).as(m.name()).contains("unknown setting");
        }
      }
    }
    System.out.printf(
        "config mutants: %d, refused %d, accepted %d%n", all.size(), refused, accepted.size());
    assertThat(refused).isGreaterThan(250);
    assertThat(accepted).isNotEmpty();
    assertThat(
            all.stream()
                .filter(m -> m.name().contains("lease = bare-number"))
                .map(m -> m.name())
                .toList())
        .isNotEmpty()
        .allSatisfy(name -> assertThat(accepted.stream().map(Mutant::name)).doesNotContain(name));
    startSomeAccepted(accepted);
  }

  /**
   * A sample of the accepted mutants of local.conf starts and stops a real worker against the
   * emulator, with its H2 store.
   */
  private void startSomeAccepted(List<Mutant> accepted) throws IOException {
    PubSubEmulator pubsub = TestServices.pubsub();
    List<Mutant> shaping =
        accepted.stream()
            .filter(m -> m.name().startsWith("local.conf: "))
            // The settings the start below points elsewhere would not be tested; a dead-letter
            // topic names a Pub/Sub resource that only run can look up (a missing one is exit 3).
            .filter(
                m ->
                    !m.name()
                        .matches(
                            ".*(project-id|pubsub-emulator-host|orders\\.name|sql\\.jdbc-url"
                                + "|dead-letter-topic)\\b.*"))
            .toList();
    int step = Math.max(1, shaping.size() / 6);
    int started = 0;
    for (int i = 0; i < shaping.size(); i += step) {
      Mutant m = shaping.get(i);
      SubscriptionFixture fixture = pubsub.createSubscription(SubscriptionSpec.defaults());
      Config pointed =
          m.config()
              .withValue(
                  "pubsub-worker.project-id", ConfigValueFactory.fromAnyRef(pubsub.projectId()))
              .withValue(
                  "pubsub-worker.pubsub-emulator-host",
                  ConfigValueFactory.fromAnyRef(pubsub.hostPort()))
              .withValue(
                  "pubsub-worker.subscriptions.orders.name",
                  ConfigValueFactory.fromAnyRef(fixture.subscription().getSubscription()))
              .withValue(
                  "pubsub-worker.lock-store.sql.jdbc-url",
                  ConfigValueFactory.fromAnyRef(
                      "jdbc:h2:mem:" + TestServices.uniqueName("mutant") + ";DB_CLOSE_DELAY=-1"));
      WorkerConfig settings =
          WorkerConfig.loadFile(write(new Mutant(m.name(), pointed)), getClass().getClassLoader());
      Worker worker =
          Worker.newBuilder(settings)
              .plugins(PluginLoader.load(settings, getClass().getClassLoader()))
              .build();
      try {
        worker.start();
      } catch (RuntimeException e) {
        throw new AssertionError(m.name() + ": check-config accepted it, run failed: " + e, e);
      } finally {
        worker.stop();
      }
      assertThat(worker.failure()).as(m.name()).isEmpty();
      started++;
    }
    System.out.printf("accepted mutants started and stopped as workers: %d%n", started);
    assertThat(started).isGreaterThanOrEqualTo(3);
  }

  /** A handful of mutants as real processes: the same exit code and lines as in-process. */
  @Test
  void mutants_as_processes_exit_the_same_way() throws Exception {
    Config local = base("local.conf");
    List<Mutant> some =
        List.of(
            new Mutant(
                "lease = 5",
                local.withValue(
                    "pubsub-worker.subscriptions.orders.lease", ConfigValueFactory.fromAnyRef(5))),
            new Mutant(
                "parallel-pull-count = 100000",
                local.withValue(
                    "pubsub-worker.subscription-defaults.parallel-pull-count",
                    ConfigValueFactory.fromAnyRef(100000))),
            new Mutant(
                "emulator port 99999",
                local.withValue(
                    "pubsub-worker.pubsub-emulator-host",
                    ConfigValueFactory.fromAnyRef("127.0.0.1:99999"))),
            new Mutant(
                "invalid JDBC URL",
                local.withValue(
                    "pubsub-worker.lock-store.sql.jdbc-url",
                    ConfigValueFactory.fromAnyRef("jdbc:postgresql://db:5432:5432/x"))),
            new Mutant(
                "root misspelled",
                ConfigFactory.empty()
                    .withValue("pubsub-workr", local.getConfig(WorkerConfig.ROOT).root())),
            new Mutant("unchanged", local));
    for (Mutant m : some) {
      Path file = write(m);
      Outcome inProcess = checkConfig(file);
      Path log = dir.resolve("process.log");
      ProcessBuilder pb = AppProcess.builder(log, "check-config", "--config", file.toString());
      pb.environment().remove("PUBSUB_EMULATOR_HOST");
      pb.environment().remove("GOOGLE_CLOUD_PROJECT");
      Process p = pb.start();
      assertThat(p.waitFor(60, TimeUnit.SECONDS)).as(m.name()).isTrue();
      // The worker's own log lines (a timestamp first) go to the console too; drop them.
      String output =
          Files.readString(log)
              .lines()
              .filter(l -> !l.matches("\\d\\d:\\d\\d:\\d\\d\\.\\d{3} .*"))
              .map(l -> l + System.lineSeparator())
              .collect(java.util.stream.Collectors.joining());
      assertThat(p.exitValue()).as(m.name() + "\n" + output).isEqualTo(inProcess.exitCode());
      assertClean(
          m.name(),
          new Outcome(
              p.exitValue(), p.exitValue() == 0 ? output : "", p.exitValue() == 0 ? "" : output));
      assertThat(output)
          .as(m.name())
          .contains(inProcess.exitCode() == 0 ? inProcess.out() : inProcess.err());
    }
  }
}
