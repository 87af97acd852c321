package dev.pubsubworker.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The standalone entry point: its arguments, and a real process serving the real client. */
class EmbeddedPubSubMainTest {

  @Test
  void arguments_set_host_and_port_and_nonsense_is_refused_in_one_line() {
    PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    assertThat(
            EmbeddedPubSubMain.parse(
                new String[] {"--port", "0", "--host=127.0.0.1"}, EmbeddedPubSub.newBuilder(), out))
        .isTrue();
    assertThat(EmbeddedPubSubMain.parse(new String[] {"--help"}, EmbeddedPubSub.newBuilder(), out))
        .isFalse();
    assertThatThrownBy(
            () ->
                EmbeddedPubSubMain.parse(
                    new String[] {"--port", "x"}, EmbeddedPubSub.newBuilder(), out))
        .hasMessage("--port must be a number, but was 'x'");
    assertThatThrownBy(
            () ->
                EmbeddedPubSubMain.parse(
                    new String[] {"--port", "70000"}, EmbeddedPubSub.newBuilder(), out))
        .hasMessage("--port must be within 0..65535, but was 70000");
    assertThatThrownBy(
            () ->
                EmbeddedPubSubMain.parse(new String[] {"--port"}, EmbeddedPubSub.newBuilder(), out))
        .hasMessage("--port needs a value");
    assertThatThrownBy(
            () ->
                EmbeddedPubSubMain.parse(
                    new String[] {"--verbose"}, EmbeddedPubSub.newBuilder(), out))
        .hasMessage("unknown argument '--verbose' (expected --host HOST, --port PORT or --help)");
  }

  @Test
  void the_process_prints_where_it_listens_serves_the_client_and_stops_on_sigterm()
      throws Exception {
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    Process process =
        new ProcessBuilder(
                List.of(
                    java.toString(),
                    "-cp",
                    System.getProperty("java.class.path"),
                    EmbeddedPubSubMain.class.getName(),
                    "--port",
                    "0"))
            .redirectErrorStream(true)
            .start();
    try {
      BufferedReader out =
          new BufferedReader(
              new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
      String line = out.readLine();
      assertThat(line).matches("embedded Pub/Sub listening on 127\\.0\\.0\\.1:\\d+");
      String hostPort = line.substring(line.lastIndexOf(' ') + 1);

      PubSubTarget target = new PubSubTarget(hostPort, "standalone");
      try {
        assertThat(target.createTopic("hello").getTopic()).startsWith("hello-");
      } finally {
        target.close();
      }

      process.destroy(); // SIGTERM
      assertThat(process.waitFor(20, TimeUnit.SECONDS)).as("exited after SIGTERM").isTrue();
    } finally {
      process.destroyForcibly();
    }
  }
}
