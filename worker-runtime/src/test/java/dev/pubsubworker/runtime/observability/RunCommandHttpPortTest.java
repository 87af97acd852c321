package dev.pubsubworker.runtime.observability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pubsubworker.runtime.cli.WorkerCli;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run} with a metrics port that is taken, or a host that does not resolve: one clear error,
 * exit 3, before touching Pub/Sub.
 */
class RunCommandHttpPortTest {

  @TempDir Path dir;

  @Test
  void a_taken_port_stops_run_with_an_error_naming_the_setting() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      Path config = dir.resolve("worker.conf");
      Files.writeString(
          config,
          """
          pubsub-worker {
            project-id = shop
            pubsub-emulator-host = "127.0.0.1:9"
            observability { http-host = "127.0.0.1", http-port = %d }
            subscriptions { orders { name = orders-sub, handler = orders } }
          }
          """
              .formatted(taken.getLocalPort()));
      Run run = execute("run", config);
      assertThat(run.code()).isEqualTo(3);
      assertThat(run.err())
          .startsWith("error: ")
          .contains(
              "cannot bind the metrics and health server to 127.0.0.1:"
                  + taken.getLocalPort()
                  + " (pubsub-worker.observability.http-host / http-port)")
          .doesNotContain("\tat ");
    }
  }

  @Test
  void a_host_that_does_not_resolve_stops_run_with_exit_3_and_one_line() throws Exception {
    Path config = dir.resolve("unresolvable.conf");
    Files.writeString(
        config,
        """
        pubsub-worker {
          project-id = shop
          pubsub-emulator-host = "127.0.0.1:9"
          observability { http-host = "no-such-host.invalid", http-port = 8080 }
          subscriptions { orders { name = orders-sub, handler = orders } }
        }
        """);
    Run run = execute("run", config);
    assertThat(run.code()).isEqualTo(3);
    assertThat(run.err().lines().toList())
        .containsExactly(
            "error: cannot bind the metrics and health server to no-such-host.invalid:8080"
                + " (pubsub-worker.observability.http-host / http-port): host no-such-host.invalid"
                + " does not resolve to an address",
            "(run with --verbose for the stack trace)");
  }

  @Test
  void an_address_that_is_no_address_is_refused_by_check_config_and_run_with_exit_2()
      throws Exception {
    Path config = dir.resolve("bad-host.conf");
    Files.writeString(
        config,
        """
        pubsub-worker {
          project-id = shop
          pubsub-emulator-host = "127.0.0.1:9"
          observability { http-host = "999.1.1.1", http-port = 8080 }
          subscriptions { orders { name = orders-sub, handler = orders } }
        }
        """);
    for (String command : new String[] {"check-config", "run"}) {
      Run run = execute(command, config);
      assertThat(run.code()).as(command).isEqualTo(2);
      assertThat(run.err())
          .as(command)
          .contains(
              "pubsub-worker.observability.http-host: must be a host name or IP address, such as"
                  + " 0.0.0.0, but '999.1.1.1' is not an IPv4 address (four parts, each 0..255)"
                  + " nor a host name")
          .doesNotContain("\tat ");
    }
  }

  private record Run(int code, String err) {}

  /** {@code command --config config}, in this JVM. */
  private static Run execute(String command, Path config) {
    StringWriter err = new StringWriter();
    int code =
        WorkerCli.execute(
            new String[] {command, "--config", config.toString()},
            new java.io.BufferedReader(new java.io.StringReader("")),
            new PrintWriter(new StringWriter(), true),
            new PrintWriter(err, true));
    return new Run(code, err.toString());
  }
}
