package dev.pubsubworker.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pubsubworker.testkit.services.SqlDatabase;
import dev.pubsubworker.testkit.services.TestServices;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The demo on Google's Pub/Sub emulator with every lock store: exactly-once must hold. */
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
                "0.05",
                "--pubsub-emulator-host",
                TestServices.pubsub().hostPort()));
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
    assertThat(run.out())
        .contains("orders                     40")
        .contains("doubled effects            0")
        .contains("lost orders                0")
        .contains("exactly-once               HELD");
    assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
  }

  @Test
  void bad_shares_are_one_line_and_exit_2() {
    CliRun run = CliRun.of("demo", "--duplicates", "1.5");
    assertThat(run.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(run.err()).contains("error: --duplicates must be a share 0..1, but was 1.5");
    CliRun backend = CliRun.of("demo", "--backend", "mongodb");
    assertThat(backend.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(backend.err()).contains("must be in-memory, h2, redis, postgres or datastore");
  }

  @Test
  void an_unreachable_emulator_is_one_line_and_exit_3() {
    CliRun run = CliRun.of("demo", "--pubsub-emulator-host", "127.0.0.1:9", "--messages", "5");
    assertThat(run.exitCode()).isEqualTo(ExitCodes.UNAVAILABLE);
    assertThat(run.out()).contains("demo: PUBSUB_EMULATOR_HOST=127.0.0.1:9 does not answer");
  }
}
