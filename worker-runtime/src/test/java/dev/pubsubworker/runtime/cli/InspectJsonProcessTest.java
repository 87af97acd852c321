package dev.pubsubworker.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pubsubworker.runtime.testing.CliProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code inspect --json} as a separate process: stdout is exactly one JSON object, and the log
 * lines the command writes on the way (the connection pool starting) go to stderr.
 */
class InspectJsonProcessTest {

  @TempDir Path dir;

  @Test
  void inspect_json_prints_only_json_on_stdout_and_logs_on_stderr() throws Exception {
    Path config = dir.resolve("worker.conf");
    Files.writeString(
        config,
        """
        pubsub-worker {
          project-id = p
          lock-store {
            type = sql
            sql.jdbc-url = "jdbc:h2:mem:inspect-json;DB_CLOSE_DELAY=-1"
          }
          subscriptions { orders { handler = orders } }
        }
        """);
    Path out = dir.resolve("stdout");
    Path err = dir.resolve("stderr");
    Process p =
        CliProcess.builder(
                out,
                "inspect",
                "--subscription",
                "orders",
                "po-7",
                "--json",
                "--config",
                config.toString())
            .redirectErrorStream(false)
            .redirectError(err.toFile())
            .start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(read(err)).isZero();

    String stdout = read(out);
    JsonNode json = new ObjectMapper().readTree(stdout);
    assertThat(json.get("key").asText()).isEqualTo("orders:po-7");
    assertThat(stdout.strip()).startsWith("{").endsWith("}").doesNotContain("\n");
    assertThat(read(err)).as("the log went to stderr").contains("INFO");
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
