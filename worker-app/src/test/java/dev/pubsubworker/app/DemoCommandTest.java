package dev.pubsubworker.app;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pubsubworker.runtime.cli.ExitCodes;
import dev.pubsubworker.testservices.SqlDatabase;
import dev.pubsubworker.testservices.TestServices;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The demo with every lock store on its default Pub/Sub, the embedded server (nothing installed),
 * and on Google's emulator, running ({@code --pubsub HOST:PORT}) and started by the demo ({@code
 * --pubsub emulator}): exactly-once must hold.
 */
class DemoCommandTest {

  @ParameterizedTest(name = "demo on {0}")
  @ValueSource(strings = {"in-memory", "h2", "redis", "postgres", "datastore"})
  void demo_reports_no_doubled_and_no_lost_orders_and_exits_0(String backend) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "demo",
                "--backend",
                backend,
                "--messages",
                "40",
                "--duplicates",
                "0.25",
                "--failures",
                "0.1",
                "--crashes",
                "0.05"));
    switch (backend) {
      case "redis" -> args.addAll(List.of("--store-url", TestServices.redis().uri()));
      case "postgres" -> {
        SqlDatabase pg = TestServices.postgres();
        args.addAll(
            List.of(
                "--store-url",
                pg.jdbcUrl()
                    + (pg.jdbcUrl().contains("?") ? "&" : "?")
                    + "user="
                    + pg.user()
                    + (pg.password().isEmpty() ? "" : "&password=" + pg.password())));
      }
      case "datastore" ->
          args.addAll(List.of("--datastore-emulator-host", TestServices.datastore().hostPort()));
      default -> {}
    }
    CliRun run = CliRun.of(args.toArray(String[]::new));
    assertThat(run.out()).contains("Pub/Sub: embedded server at 127.0.0.1:");
    assertHeld(run, 40);
  }

  @Test
  void demo_on_a_running_google_emulator() {
    CliRun run =
        CliRun.of(
            "demo",
            "--messages",
            "30",
            "--pubsub",
            TestServices.pubsub().hostPort(),
            "--timeout",
            "PT2M");
    assertThat(run.out())
        .contains("Pub/Sub: running server at " + TestServices.pubsub().hostPort());
    assertHeld(run, 30);
  }

  @Test
  void demo_starts_google_emulator_when_asked() {
    // Google's emulator from the test services: skipped where it is missing, failed in CI.
    TestServices.pubsub();
    CliRun run = CliRun.of("demo", "--messages", "20", "--pubsub", "emulator");
    assertThat(run.out()).contains("Pub/Sub: Google's emulator at 127.0.0.1:");
    assertHeld(run, 20);
  }

  private static void assertHeld(CliRun run, int orders) {
    assertThat(run.out())
        .contains(String.format("orders                     %d", orders))
        .contains("doubled effects            0")
        .contains("lost orders                0")
        .contains("exactly-once               HELD");
    assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
  }

  @Test
  void after_the_demo_the_logs_are_back_at_their_level() {
    ch.qos.logback.classic.Logger root =
        (ch.qos.logback.classic.Logger)
            org.slf4j.LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    ch.qos.logback.classic.Level before = root.getLevel();
    ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> lines =
        new ch.qos.logback.core.read.ListAppender<>();
    lines.start();
    root.addAppender(lines);
    try {
      assertHeld(CliRun.of("demo", "--messages", "10"), 10);
      assertThat(root.getLevel()).isEqualTo(before).isNotEqualTo(ch.qos.logback.classic.Level.OFF);
      org.slf4j.LoggerFactory.getLogger(DemoCommandTest.class).warn("after the demo");
      assertThat(lines.list)
          .extracting(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage)
          .contains("after the demo");
    } finally {
      root.detachAppender(lines);
    }
  }

  @Test
  void bad_shares_are_one_line_and_exit_2() {
    CliRun run = CliRun.of("demo", "--duplicates", "1.5");
    assertThat(run.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(run.err()).contains("error: --duplicates must be a share 0..1, but was 1.5");
    CliRun backend = CliRun.of("demo", "--backend", "mongodb");
    assertThat(backend.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(backend.err()).contains("must be in-memory, h2, redis, postgres or datastore");
    CliRun pubsub = CliRun.of("demo", "--pubsub", "nowhere");
    assertThat(pubsub.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(pubsub.err()).contains("must be embedded, emulator or HOST:PORT, but was 'nowhere'");
  }

  @Test
  void without_the_cloud_cli_the_demo_says_what_to_install_and_exits_3(@TempDir Path dir)
      throws Exception {
    // CLOUDSDK_ROOT_DIR, when set, is the only place the demo looks for the Cloud CLI.
    Path sdk = Files.createDirectories(dir.resolve("no-cloud-cli"));
    String pubsubHint =
        "demo: no Pub/Sub emulator found: install the Google Cloud CLI's pubsub-emulator (apt-get"
            + " install google-cloud-cli-pubsub-emulator, or gcloud components install"
            + " pubsub-emulator), pass --pubsub HOST:PORT of a running one, or leave --pubsub out"
            + " to use the embedded server\n";
    String datastoreHint =
        "demo: no Datastore emulator found: install the Google Cloud CLI's cloud-datastore-emulator"
            + " (apt-get install google-cloud-cli-datastore-emulator, or gcloud components install"
            + " cloud-datastore-emulator), or set DATASTORE_EMULATOR_HOST to a running one\n";
    assertThat(demoWithoutCloudCli(dir.resolve("pubsub.log"), sdk, "--pubsub", "emulator"))
        .contains(pubsubHint);
    assertThat(demoWithoutCloudCli(dir.resolve("datastore.log"), sdk, "--backend", "datastore"))
        .contains(datastoreHint);
  }

  /**
   * Runs the app in its own JVM with {@code CLOUDSDK_ROOT_DIR=sdk}; its output, once it exits 3.
   */
  private static String demoWithoutCloudCli(Path log, Path sdk, String... options)
      throws Exception {
    List<String> args = new ArrayList<>(List.of("demo"));
    args.addAll(List.of(options));
    ProcessBuilder builder = AppProcess.builder(log, args.toArray(String[]::new));
    builder.environment().put("CLOUDSDK_ROOT_DIR", sdk.toString());
    builder.environment().remove("DATASTORE_EMULATOR_HOST");
    Process process = builder.start();
    assertThat(process.waitFor(2, TimeUnit.MINUTES)).as("the demo exits").isTrue();
    String out = Files.readString(log);
    assertThat(process.exitValue()).as(out).isEqualTo(ExitCodes.UNAVAILABLE);
    return out;
  }

  @Test
  void an_unreachable_pubsub_is_one_line_and_exit_3() {
    CliRun run = CliRun.of("demo", "--pubsub", "127.0.0.1:9", "--messages", "5");
    assertThat(run.exitCode()).isEqualTo(ExitCodes.UNAVAILABLE);
    assertThat(run.out()).contains("demo: no Pub/Sub server answers at --pubsub 127.0.0.1:9");
  }
}
