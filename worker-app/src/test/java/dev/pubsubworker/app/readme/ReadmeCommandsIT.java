package dev.pubsubworker.app.readme;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.pubsubworker.testservices.PubSubEmulator;
import dev.pubsubworker.testservices.TestServices;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The root README's command blocks, read from the README when the test runs and executed as
 * processes from the repository's root, after {@code package} built the executable jar: the quick
 * start, "Running it" (both its blocks: with Google's emulator, and "No Google Cloud CLI?" with
 * only {@code java} on the PATH) and "Redrive and replay". Commands of ours ({@code java -jar
 * worker-app/target/...}) and the {@code curl} set-up run as written; the build command ({@code
 * ./mvnw}) is the build that runs this test, and the wrapper is checked to start; the emulator
 * {@code gcloud} would start is Google's emulator from the test services, handed over through
 * {@code PUBSUB_EMULATOR_HOST} and its address; the standalone embedded server runs as written, on
 * a free port, and is handed over the same way. Any other command fails the test, so a new README
 * command needs a rule here.
 */
class ReadmeCommandsIT {

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final Path JAR = ROOT.resolve("worker-app/target/pubsub-worker.jar");
  private static final String OURS = "java -jar worker-app/target/pubsub-worker.jar ";
  private static final Pattern EMULATOR_START =
      Pattern.compile("gcloud beta emulators pubsub start --host-port=(\\S+)( .*)?");
  private static final String EMBEDDED_START =
      "java -jar pubsub-embedded/target/pubsub-embedded.jar";
  private static final Pattern EMBEDDED_PORT = Pattern.compile("--port (\\d+)");
  private static final Pattern EMBEDDED_LISTENING =
      Pattern.compile("embedded Pub/Sub listening on (\\S+)");

  @TempDir Path dir;

  private final List<Process> background = new ArrayList<>();
  private final Map<String, String> replacements = new LinkedHashMap<>();
  private final Map<String, String> environment = new LinkedHashMap<>();
  private int commandsRun;

  @AfterEach
  void stopBackground() throws InterruptedException {
    for (Process p : background) {
      p.destroy();
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
    }
  }

  /** One command as a shell would see it; {@code background} when it ended with {@code &}. */
  record Command(String text, boolean background) {}

  /**
   * The commands of the ```bash blocks in the README section whose heading contains {@code title}.
   */
  static List<Command> commands(String readme, String title) {
    return blocks(readme, title).stream().flatMap(List::stream).toList();
  }

  /**
   * The ```bash blocks in the README section whose heading contains {@code title}, each as its
   * commands.
   */
  static List<List<Command>> blocks(String readme, String title) {
    // The section: from its heading to the next heading of its level or above, outside code.
    int level = -1;
    boolean inCode = false;
    StringBuilder sectionText = new StringBuilder();
    for (String line : readme.lines().toList()) {
      if (line.startsWith("```")) {
        inCode = !inCode;
      }
      Matcher heading = Pattern.compile("^(#+) (.*)$").matcher(line);
      if (!inCode && heading.matches()) {
        if (level > 0 && heading.group(1).length() <= level) {
          break;
        }
        if (level < 0 && heading.group(2).contains(title)) {
          level = heading.group(1).length();
          continue;
        }
      }
      if (level > 0) {
        sectionText.append(line).append('\n');
      }
    }
    assertThat(level).as("README section '" + title + "'").isPositive();
    String section = sectionText.toString();
    List<List<Command>> blocks = new ArrayList<>();
    Matcher block = Pattern.compile("(?s)```bash\\n(.*?)```").matcher(section);
    while (block.find()) {
      List<Command> commands = new ArrayList<>();
      blocks.add(commands);
      String joined = block.group(1).replaceAll("\\\\\\n\\s*", "");
      for (String line : joined.split("\\n")) {
        String text = line.replaceFirst("\\s+#.*$", "").trim();
        if (text.isEmpty() || text.startsWith("#")) {
          continue;
        }
        for (String part : text.split(" && ")) {
          String command = part.trim();
          boolean bg = command.endsWith("&");
          commands.add(
              new Command(bg ? command.substring(0, command.length() - 1).trim() : command, bg));
        }
      }
      assertThat(commands).as("commands in a block of README section '" + title + "'").isNotEmpty();
    }
    assertThat(blocks).as("command blocks in README section '" + title + "'").isNotEmpty();
    return blocks;
  }

  private ProcessBuilder shell(String command, Path log) {
    String text = command;
    for (Map.Entry<String, String> r : replacements.entrySet()) {
      text = text.replace(r.getKey(), r.getValue());
    }
    ProcessBuilder pb =
        new ProcessBuilder("bash", "-c", "exec " + text)
            .directory(ROOT.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    Map<String, String> env = pb.environment();
    env.keySet().removeIf(k -> k.startsWith("PUBSUB_WORKER_") || k.equals("GOOGLE_CLOUD_PROJECT"));
    env.remove("PUBSUB_EMULATOR_HOST");
    // The java the build runs with, and no worker's HTTP port fighting over 8080.
    env.put("PATH", Path.of(System.getProperty("java.home"), "bin") + ":" + env.get("PATH"));
    env.put("PUBSUB_WORKER_HTTP_PORT", "0");
    env.putAll(environment);
    return pb;
  }

  /** Runs {@code command} to its end; returns its output. */
  private String runToEnd(Command command, Duration limit) throws Exception {
    Path log = dir.resolve("command-" + (++commandsRun) + ".log");
    Process p = shell(command.text(), log).start();
    if (!p.waitFor(limit.toSeconds(), TimeUnit.SECONDS)) {
      p.destroyForcibly();
      fail(
          "'"
              + command.text()
              + "' did not finish within "
              + limit
              + ":\n"
              + Files.readString(log));
    }
    String output = Files.readString(log);
    assertThat(p.exitValue()).as("'" + command.text() + "' exit code\n" + output).isZero();
    return output;
  }

  /** What a block's commands did, for the checks after the block. */
  private static final class Run {
    Process worker;
    Path workerLog;
    int published;
    int redrives;
    boolean created;
  }

  private Run execute(List<Command> commands) throws Exception {
    Run run = new Run();
    for (Command c : commands) {
      String text = c.text();
      Matcher emulator = EMULATOR_START.matcher(text);
      if (text.startsWith("./mvnw ")) {
        // The build running this test has just packaged the jars this command builds; the wrapper
        // itself must run (it fetched its Maven on first use, as a user's first command does).
        assertThat(text).contains(" package").contains("-pl worker-app -am");
        assertThat(runToEnd(new Command("./mvnw -v", false), Duration.ofMinutes(3)))
            .contains("Apache Maven");
        assertThat(JAR).exists();
        try (var jars = Files.list(ROOT.resolve("plugins/orders-example/target"))) {
          assertThat(jars.map(Path::getFileName).map(Path::toString))
              .anyMatch(n -> n.matches("pubsub-worker-plugin-orders-example-.*\\.jar"));
        }
      } else if (emulator.matches()) {
        assertThat(c.background()).as(text).isTrue();
        PubSubEmulator pubsub = TestServices.pubsub();
        replacements.put(emulator.group(1), pubsub.hostPort());
        environment.put("PUBSUB_EMULATOR_HOST", pubsub.hostPort());
      } else if (text.startsWith(EMBEDDED_START)) {
        // The standalone embedded server, as written but on a free port (the README's port stands
        // for the one it printed), reached through PUBSUB_EMULATOR_HOST and its address.
        assertThat(c.background()).as(text).isTrue();
        Matcher port = EMBEDDED_PORT.matcher(text);
        assertThat(port.find()).as(text).isTrue();
        Path log = dir.resolve("pubsub-embedded.log");
        Process server = shell(port.replaceFirst("--port 0"), log).start();
        background.add(server);
        String hostPort =
            Awaitility.await("the embedded Pub/Sub server listening")
                .atMost(Duration.ofSeconds(60))
                .until(
                    () -> {
                      if (!server.isAlive()) {
                        fail("the embedded Pub/Sub server exited:\n" + Files.readString(log));
                      }
                      Matcher m = EMBEDDED_LISTENING.matcher(Files.readString(log));
                      return m.find() ? m.group(1) : null;
                    },
                    java.util.Objects::nonNull);
        replacements.put("127.0.0.1:" + port.group(1), hostPort);
        environment.put("PUBSUB_EMULATOR_HOST", hostPort);
      } else if (text.startsWith("curl ")) {
        String output = runToEnd(c, Duration.ofSeconds(30));
        assertThat(output).as(text).contains("\"name\"").doesNotContain("\"error\"");
      } else if (text.startsWith(OURS)) {
        String args = text.substring(OURS.length());
        if (c.background()) {
          assertThat(args).startsWith("run ");
          run.workerLog = dir.resolve("worker.log");
          run.worker = shell(text, run.workerLog).start();
          background.add(run.worker);
          Awaitility.await("the worker started")
              .atMost(Duration.ofSeconds(90))
              .until(
                  () -> {
                    if (!run.worker.isAlive()) {
                      fail("the worker exited:\n" + Files.readString(run.workerLog));
                    }
                    return Files.readString(run.workerLog).contains("worker started");
                  });
        } else if (args.startsWith("demo")) {
          String output = runToEnd(c, Duration.ofMinutes(5));
          assertThat(output).contains("exactly-once").contains("HELD");
        } else if (args.startsWith("check-config ")) {
          String output = runToEnd(c, Duration.ofSeconds(60));
          assertThat(output)
              .contains("config OK")
              .contains("orders-example (dev.pubsubworker.plugins.orders.OrdersPlugin, ")
              .contains("plugin-orders-example-");
        } else if (args.startsWith("publish ")) {
          String output = runToEnd(c, Duration.ofSeconds(60));
          Matcher count = Pattern.compile("--count (\\d+)").matcher(args);
          run.published = count.find() ? Integer.parseInt(count.group(1)) : 1;
          assertThat(output).contains("published " + run.published + " message(s)");
        } else if (args.startsWith("create-resources ")) {
          // As shown, and once more: the second run finds what the first created.
          String first = runToEnd(c, Duration.ofSeconds(60));
          assertThat(first)
              .contains("topic projects/local-project/topics/orders: created")
              .contains("subscription projects/local-project/subscriptions/orders-sub: created");
          String second = runToEnd(c, Duration.ofSeconds(60));
          assertThat(second)
              .contains("topic projects/local-project/topics/orders: exists")
              .contains("subscription projects/local-project/subscriptions/orders-sub: exists")
              .doesNotContain("created")
              .doesNotContain("mismatch");
          run.created = true;
        } else if (args.startsWith("redrive ")) {
          String output = runToEnd(c, Duration.ofSeconds(90));
          assertThat(output)
              .containsPattern(
                  "redrive( --republish)?( --dry-run)? of orders from"
                      + " projects/local-project/subscriptions/orders-dead-sub"
                      + "( to projects/local-project/topics/orders)?: \\d+ read");
          run.redrives++;
        } else {
          fail("README command of ours the test has no check for: " + text);
        }
      } else {
        fail("README command the test does not know how to run: " + text);
      }
    }
    return run;
  }

  @Test
  void the_quick_start_runs_as_shown() throws Exception {
    execute(commands(Files.readString(ROOT.resolve("README.md")), "Quick start"));
    assertThat(commandsRun).isPositive();
  }

  /**
   * The blocks of "Running it": the first with Google's emulator (from the Google Cloud CLI), the
   * second the "No Google Cloud CLI?" one on the standalone embedded server. A further block needs
   * a test here.
   */
  private static List<List<Command>> runningIt() throws IOException {
    List<List<Command>> blocks = blocks(Files.readString(ROOT.resolve("README.md")), "Running it");
    assertThat(blocks).as("the command blocks of 'Running it'").hasSize(2);
    assertThat(blocks.get(0)).anyMatch(c -> EMULATOR_START.matcher(c.text()).matches());
    assertThat(blocks.get(1)).anyMatch(c -> c.text().startsWith(EMBEDDED_START));
    return blocks;
  }

  @Test
  void running_it_locally_runs_as_shown() throws Exception {
    Run run = execute(runningIt().get(0));
    assertEveryOrderPlacedOnce(run);
  }

  @Test
  void running_it_without_the_google_cloud_cli_runs_as_shown_with_java_alone() throws Exception {
    // Only java on the PATH: no gcloud, no curl.
    environment.put("PATH", Path.of(System.getProperty("java.home"), "bin").toString());
    Path probe = dir.resolve("probe.log");
    Process which =
        shell("", probe).command("bash", "-c", "command -v gcloud || command -v curl").start();
    assertThat(which.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(which.exitValue())
        .as("gcloud or curl found: " + Files.readString(probe))
        .isNotZero();

    Run run = execute(runningIt().get(1));
    assertThat(run.created).as("the block runs create-resources").isTrue();
    assertEveryOrderPlacedOnce(run);
  }

  private static void assertEveryOrderPlacedOnce(Run run) throws Exception {
    assertThat(run.worker).as("the block starts a worker").isNotNull();
    assertThat(run.published).isPositive();
    // Every order placed once, however often it was published: one "placed order" line each.
    Awaitility.await("every published order placed")
        .atMost(Duration.ofSeconds(90))
        .until(() -> placed(run.workerLog).size() >= run.published);
    run.worker.destroy(); // SIGTERM: a graceful stop
    assertThat(run.worker.waitFor(60, TimeUnit.SECONDS)).isTrue();
    String log = Files.readString(run.workerLog);
    assertThat(run.worker.exitValue()).as(log).isZero();
    List<String> placed = placed(run.workerLog);
    assertThat(placed).hasSize(run.published).doesNotHaveDuplicates();
    assertThat(log).contains("plugin orders-example").contains("plugin-orders-example-");
  }

  @Test
  void redrive_runs_as_shown() throws Exception {
    // The section continues "Running it": the same emulator, at the address its commands name.
    PubSubEmulator pubsub = TestServices.pubsub();
    replacements.put("127.0.0.1:8085", pubsub.hostPort());
    environment.put("PUBSUB_EMULATOR_HOST", pubsub.hostPort());
    Run run = execute(commands(Files.readString(ROOT.resolve("README.md")), "Redrive and replay"));
    assertThat(run.redrives).as("the block's redrive commands").isEqualTo(3);
  }

  private static List<String> placed(Path log) throws IOException {
    List<String> orders = new ArrayList<>();
    Matcher m = Pattern.compile("placed order (\\S+)").matcher(Files.readString(log));
    while (m.find()) {
      orders.add(m.group(1));
    }
    return orders;
  }
}
