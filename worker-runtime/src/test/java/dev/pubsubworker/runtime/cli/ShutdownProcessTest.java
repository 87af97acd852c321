package dev.pubsubworker.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.typesafe.config.ConfigFactory;
import dev.pubsubworker.core.LockRecord;
import dev.pubsubworker.core.LockState;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.store.LockStore;
import dev.pubsubworker.runtime.testing.CliProcess;
import dev.pubsubworker.runtime.worker.Worker;
import dev.pubsubworker.testservices.PubSubEmulator;
import dev.pubsubworker.testservices.SubscriptionFixture;
import dev.pubsubworker.testservices.SubscriptionSpec;
import dev.pubsubworker.testservices.TestServices;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SIGTERM keeps the shutdown contract, end to end: {@code run} as a real process on Google's
 * Pub/Sub emulator with a Redis lock store, more buffered messages than handler threads, and
 * handlers that block until the test lets them go (a plugin jar built here).
 *
 * <p>After the signal: no other handler ever starts; the running handler the test releases finishes
 * within the grace and is DONE; the ones still blocked at the grace are interrupted and their
 * claims released ({@code inspect}: CLAIMED, no claim token, fence raised, reclaimable); the
 * messages that never started have no record; the process exits 0 within the grace plus the
 * documented bound; and the log's counts are what happened.
 */
class ShutdownProcessTest {

  private static final int THREADS = 3;
  private static final int MESSAGES = 10;
  private static final Duration GRACE = Duration.ofSeconds(3);
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final Pattern STARTED = Pattern.compile("TEST handler started (\\d+)");

  @TempDir Path dir;

  /** Where the test drops {@code release-N} to let handler N finish. */
  private Path releases;

  /** The Redis key prefix of this test's records. */
  private String prefix;

  /**
   * Writes a worker config (Redis store, the blocking plugin, {@link #THREADS} handler threads) and
   * publishes {@code messages} jobs before any worker starts.
   */
  private Path setUp(int messages) throws IOException {
    PubSubEmulator pubsub = TestServices.pubsub();
    SubscriptionFixture fixture = pubsub.createSubscription(SubscriptionSpec.defaults());
    Path plugins = Files.createDirectories(dir.resolve("plugins"));
    buildBlockingPlugin(plugins.resolve("blocking.jar"));
    releases = Files.createDirectories(dir.resolve("releases"));
    prefix = TestServices.uniqueName("sigterm") + ":";
    Path config = dir.resolve("worker.conf");
    Files.writeString(
        config,
        """
        pubsub-worker {
          project-id = "%s"
          pubsub-emulator-host = "%s"
          shutdown-grace = %ds
          plugins-dir = "%s"
          plugins.blocking.release-dir = "%s"
          lock-store { type = redis, redis { uri = "%s", key-prefix = "%s" } }
          subscriptions {
            jobs {
              name = "%s"
              handler = block
              key = "template:job-{n}"
              lease = 30s
              executor-threads = %d
            }
          }
        }
        """
            .formatted(
                pubsub.projectId(),
                pubsub.hostPort(),
                GRACE.toSeconds(),
                plugins,
                releases,
                TestServices.redis().uri(),
                prefix,
                fixture.subscription().getSubscription(),
                THREADS));
    // Published before the worker starts, so its first pull brings more than it has threads for.
    for (int n = 1; n <= messages; n++) {
      pubsub.publish(
          fixture.topic(),
          PubsubMessage.newBuilder()
              .setData(ByteString.copyFrom("job " + n, StandardCharsets.UTF_8))
              .putAttributes("n", Integer.toString(n))
              .build());
    }
    return config;
  }

  @Test
  void sigterm_runs_nothing_new_finishes_or_releases_the_running_and_exits_0() throws Exception {
    Path config = setUp(MESSAGES);
    Path log = dir.resolve("worker.log");
    Process worker = CliProcess.builder(log, "run", "--config", config.toString()).start();
    try {
      await().atMost(WAIT).until(() -> started(log).size() == THREADS);
      long signalled = System.nanoTime();
      worker.destroy(); // SIGTERM
      await().atMost(WAIT).until(() -> Files.readString(log).contains("stopping: no delivery"));
      List<String> running = started(log);
      String finisher = running.get(0);
      Files.createFile(releases.resolve("release-" + finisher));
      await().atMost(WAIT).until(() -> Files.readString(log).contains("finished " + finisher));

      Duration bound = GRACE.plus(Worker.STOP_BOUND);
      assertThat(worker.waitFor(bound.toSeconds() + 10, TimeUnit.SECONDS))
          .as("exits within the grace plus the documented bound")
          .isTrue();
      Duration took = Duration.ofNanos(System.nanoTime() - signalled);
      assertThat(worker.exitValue()).isZero();
      String output = Files.readString(log);

      assertThat(started(log))
          .as("no handler starts after the signal: only the %d running ones ever ran", THREADS)
          .containsExactlyElementsOf(running);
      assertThat(count(output, "TEST handler finished ")).isEqualTo(1);
      assertThat(count(output, "TEST handler interrupted ")).isEqualTo(THREADS - 1);
      assertThat(output)
          .contains(
              "worker stopped: "
                  + THREADS
                  + " handler(s) were running at the stop, 1 finished within the grace, "
                  + (THREADS - 1)
                  + " abandoned (interrupted, nacked; "
                  + (THREADS - 1)
                  + " claim(s) released)")
          .doesNotContain("Grace period expired")
          .doesNotContain("\tat ");
      assertThat(
              count(output, "still running after the shutdown grace: interrupted, claim released"))
          .isEqualTo(THREADS - 1);
      Matcher refused =
          Pattern.compile("; (\\d+) delivery\\(ies\\) nacked without running").matcher(output);
      assertThat(refused.find()).isTrue();
      assertThat(Integer.parseInt(refused.group(1)))
          .as("the buffered deliveries, nacked without running")
          .isBetween(1, MESSAGES - THREADS);

      // The store, as `inspect` shows it: released claims for the abandoned handlers. The others,
      // read directly: DONE for the finished one, no record for those that never started.
      for (String n : running.subList(1, running.size())) {
        assertThat(inspect(config, "job-" + n))
            .as("job %s was abandoned: its claim released, reclaimable at once", n)
            .contains("\"state\":\"CLAIMED\"")
            .contains("\"fence\":2")
            .contains("\"claimToken\":null")
            .contains("\"reclaimable\":true");
      }
      try (LockStore store = LockStore.of(sameStore())) {
        LockRecord done = store.admin().inspect("jobs:job-" + finisher).orElseThrow();
        assertThat(done.state()).isEqualTo(LockState.DONE);
        assertThat(done.fence()).isEqualTo(1);
        for (int n = 1; n <= MESSAGES; n++) {
          if (!running.contains(Integer.toString(n))) {
            assertThat(store.admin().inspect("jobs:job-" + n))
                .as("job %s never started", n)
                .isEmpty();
          }
        }
      }

      // The timeline, for the record (not asserted: wall-clock speed is not a test's business).
      System.out.printf(
          "SIGTERM timeline: signal -> exit %d ms (grace %s, bound %s)%n",
          took.toMillis(), GRACE, bound);
      output
          .lines()
          .filter(
              l ->
                  l.contains("signal received")
                      || l.contains("stopping:")
                      || l.contains("still running after")
                      || l.contains("worker stopped")
                      || l.startsWith("TEST handler"))
          .forEach(l -> System.out.println("  " + l));
    } finally {
      worker.destroyForcibly();
    }
  }

  @Test
  void a_second_signal_exits_130_at_once_and_leaves_the_claims_to_their_lease() throws Exception {
    Path config = setUp(THREADS);
    Path log = dir.resolve("worker-twice.log");
    Process worker = CliProcess.builder(log, "run", "--config", config.toString()).start();
    try {
      await().atMost(WAIT).until(() -> started(log).size() == THREADS);
      worker.destroy(); // SIGTERM
      await().atMost(WAIT).until(() -> Files.readString(log).contains("stopping: no delivery"));
      worker.destroy(); // and again, inside the grace
      assertThat(worker.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
      assertThat(worker.exitValue()).isEqualTo(ExitCodes.HALTED).isEqualTo(130);
      String output = Files.readString(log);
      assertThat(output)
          .contains("second signal: exiting at once")
          .doesNotContain("worker stopped");
      // Nothing was released: the claim is live until its lease lapses.
      try (LockStore store = LockStore.of(sameStore())) {
        LockRecord held = store.admin().inspect("jobs:job-" + started(log).get(0)).orElseThrow();
        assertThat(held.state()).isEqualTo(LockState.CLAIMED);
        assertThat(held.fence()).isEqualTo(1);
        assertThat(held.reclaimable()).isFalse();
      }
    } finally {
      worker.destroyForcibly();
    }
  }

  /** The worker's lock store, for reading records directly. */
  private WorkerConfig sameStore() {
    String hocon =
        """
        pubsub-worker {
          project-id = p
          lock-store { type = redis, redis { uri = "%s", key-prefix = "%s" } }
          subscriptions { s { handler = h } }
        }
        """
            .formatted(TestServices.redis().uri(), prefix);
    return WorkerConfig.load(
        ConfigFactory.parseString(hocon).withFallback(ConfigFactory.defaultReference()).resolve());
  }

  private List<String> started(Path log) throws IOException {
    List<String> found = new ArrayList<>();
    Matcher m = STARTED.matcher(Files.readString(log));
    while (m.find()) {
      found.add(m.group(1));
    }
    return found;
  }

  private static int count(String text, String what) {
    return text.split(Pattern.quote(what), -1).length - 1;
  }

  private String inspect(Path config, String key) throws Exception {
    Path out = dir.resolve("inspect-" + key + ".txt");
    Process p =
        CliProcess.builder(
                out,
                "inspect",
                "--subscription",
                "jobs",
                key,
                "--json",
                "--config",
                config.toString())
            .start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    return Files.readString(out);
  }

  /**
   * A plugin {@code blocking} whose handler {@code block} prints "TEST handler started N", then
   * waits until the file {@code release-N} exists in its {@code release-dir} ("finished N"), or
   * until interrupted ("interrupted N", then it throws).
   */
  private void buildBlockingPlugin(Path jar) throws IOException {
    Map<String, String> sources =
        Map.of(
            "sdtest/BlockingPlugin.java",
            """
            package sdtest;

            import com.google.inject.Module;
            import com.typesafe.config.Config;
            import dev.pubsubworker.api.Handlers;
            import dev.pubsubworker.api.WorkerPlugin;
            import java.nio.file.Path;

            public final class BlockingPlugin implements WorkerPlugin {
              @Override
              public String name() {
                return "blocking";
              }

              @Override
              public Module module(Config config) {
                Path dir = Path.of(config.getString("release-dir"));
                return binder -> Handlers.bind(binder, "block").toInstance(new BlockingHandler(dir));
              }
            }
            """,
            "sdtest/BlockingHandler.java",
            """
            package sdtest;

            import dev.pubsubworker.api.HandlerContext;
            import dev.pubsubworker.api.InboundMessage;
            import dev.pubsubworker.api.MessageHandler;
            import java.nio.file.Files;
            import java.nio.file.Path;

            final class BlockingHandler implements MessageHandler {
              private final Path dir;

              BlockingHandler(Path dir) {
                this.dir = dir;
              }

              @Override
              public void handle(InboundMessage message, HandlerContext context) throws Exception {
                String n = message.attributes().get("n");
                System.out.println("TEST handler started " + n);
                Path release = dir.resolve("release-" + n);
                // Wait for the release file without polling: a watch on the folder wakes the
                // handler when a file appears; take() is where the shutdown's interrupt lands.
                try (java.nio.file.WatchService watch = dir.getFileSystem().newWatchService()) {
                  dir.register(watch, java.nio.file.StandardWatchEventKinds.ENTRY_CREATE);
                  while (!Files.exists(release)) {
                    java.nio.file.WatchKey key = watch.take();
                    key.pollEvents();
                    key.reset();
                  }
                } catch (InterruptedException e) {
                  System.out.println("TEST handler interrupted " + n);
                  throw e;
                }
                System.out.println("TEST handler finished " + n);
              }
            }
            """);
    Path src = Files.createDirectories(dir.resolve("plugin-src"));
    Path classes = Files.createDirectories(dir.resolve("plugin-classes"));
    List<String> args =
        new ArrayList<>(
            List.of(
                "-d",
                classes.toString(),
                "-cp",
                System.getProperty("java.class.path"),
                "-proc:none"));
    for (Map.Entry<String, String> e : sources.entrySet()) {
      Path file = src.resolve(e.getKey());
      Files.createDirectories(file.getParent());
      Files.writeString(file, e.getValue());
      args.add(file.toString());
    }
    assertThat(
            ToolProvider.getSystemJavaCompiler().run(null, null, null, args.toArray(String[]::new)))
        .isZero();
    try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar));
        var files = Files.walk(classes)) {
      for (Path f : files.filter(Files::isRegularFile).toList()) {
        out.putNextEntry(new JarEntry(classes.relativize(f).toString().replace('\\', '/')));
        Files.copy(f, out);
        out.closeEntry();
      }
      putText(
          out, "META-INF/services/dev.pubsubworker.api.WorkerPlugin", "sdtest.BlockingPlugin\n");
      putText(out, "reference.conf", "pubsub-worker.plugins.blocking { release-dir = \"\" }\n");
    }
  }

  private static void putText(JarOutputStream out, String name, String text) throws IOException {
    out.putNextEntry(new JarEntry(name));
    OutputStream o = out;
    o.write(text.getBytes(StandardCharsets.UTF_8));
    out.closeEntry();
  }
}
