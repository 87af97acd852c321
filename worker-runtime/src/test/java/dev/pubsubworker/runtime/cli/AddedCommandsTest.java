package dev.pubsubworker.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.PrintWriter;
import java.io.StringReader;
import java.io.StringWriter;
import java.util.List;
import java.util.concurrent.Callable;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** Commands an application adds to the runtime's command line (the app's {@code demo}). */
class AddedCommandsTest {

  @Command(name = "hello", description = "Greets.")
  static final class Hello implements Callable<Integer> {
    @Option(names = "--name", defaultValue = "world")
    String name;

    @CommandLine.Spec CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
      spec.commandLine().getOut().println("hello " + name);
      return 7;
    }
  }

  @Command(name = "run")
  static final class Clash implements Runnable {
    @Override
    public void run() {}
  }

  private static CliRun execute(List<?> extra, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code =
        WorkerCli.execute(
            extra,
            args,
            new BufferedReader(new StringReader("")),
            new PrintWriter(out, true),
            new PrintWriter(err, true));
    return new CliRun(code, out.toString(), err.toString());
  }

  @Test
  void an_added_command_runs_beside_the_runtime_commands() {
    CliRun hello = execute(List.of(new Hello()), "hello", "--name", "app");
    assertThat(hello.exitCode()).isEqualTo(7);
    assertThat(hello.out()).contains("hello app");
    CliRun help = execute(List.of(new Hello()), "--help");
    assertThat(help.out()).contains("hello", "run", "check-config", "publish");
  }

  @Test
  void without_added_commands_there_is_no_demo() {
    CliRun run = CliRun.of("demo");
    assertThat(run.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(run.err()).contains("Unmatched argument", "'demo'");
  }

  @Test
  void an_added_command_cannot_take_a_runtime_command_name() {
    assertThatThrownBy(() -> execute(List.of(new Clash()), "run"))
        .isInstanceOf(CommandLine.InitializationException.class)
        .hasMessageContaining("run");
  }
}
