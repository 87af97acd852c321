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

/** {@code run} with a metrics port that is taken: one clear error, before touching Pub/Sub. */
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
      StringWriter out = new StringWriter();
      StringWriter err = new StringWriter();
      int code =
          WorkerCli.execute(
              new String[] {"run", "--config", config.toString()},
              new java.io.BufferedReader(new java.io.StringReader("")),
              new PrintWriter(out, true),
              new PrintWriter(err, true));
      assertThat(code).isEqualTo(3);
      assertThat(err.toString())
          .startsWith("error: ")
          .contains(
              "cannot bind the metrics and health server to 127.0.0.1:"
                  + taken.getLocalPort()
                  + " (pubsub-worker.observability.http-host / http-port)")
          .doesNotContain("\tat ");
    }
  }
}
