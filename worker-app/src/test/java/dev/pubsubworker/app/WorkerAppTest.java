package dev.pubsubworker.app;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pubsubworker.runtime.cli.ExitCodes;
import org.junit.jupiter.api.Test;

/** The app's command line: the runtime's commands with {@code demo} beside them. */
class WorkerAppTest {

  @Test
  void help_lists_the_runtime_commands_and_demo() {
    CliRun run = CliRun.of("--help");
    assertThat(run.exitCode()).isEqualTo(ExitCodes.OK);
    assertThat(run.out())
        .contains("run", "check-config", "inspect", "forget", "purge", "publish", "demo");
  }

  @Test
  void a_runtime_command_still_runs_through_the_app() {
    CliRun run = CliRun.of("check-config", "--config", "no/such/file.conf");
    assertThat(run.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(run.err()).contains("no/such/file.conf");
  }

  @Test
  void each_run_gets_a_fresh_demo_command() {
    // Options set by one run must not leak into the next: the second run sees the defaults.
    assertThat(CliRun.of("demo", "--duplicates", "1.5").exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    CliRun second = CliRun.of("demo", "--pubsub", "127.0.0.1:9", "--messages", "5");
    assertThat(second.exitCode()).isEqualTo(ExitCodes.UNAVAILABLE);
    assertThat(second.err()).doesNotContain("--duplicates");
  }
}
