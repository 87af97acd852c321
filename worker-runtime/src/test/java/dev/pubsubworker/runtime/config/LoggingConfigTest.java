package dev.pubsubworker.runtime.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code pubsub-worker.logging}: defaults from {@code reference.conf}, and a bad value refused. */
class LoggingConfigTest {

  @TempDir Path dir;

  private WorkerConfig load(String logging) throws IOException {
    Path file = dir.resolve("worker.conf");
    Files.writeString(
        file,
        """
        pubsub-worker {
          project-id = "demo-project"
          subscriptions { orders { name = "orders-sub", handler = "orders" } }
          logging { %s }
        }
        """
            .formatted(logging));
    return WorkerConfig.loadFile(file, getClass().getClassLoader());
  }

  @Test
  void json_lines_carry_their_source_location_from_warn_up_by_default() throws IOException {
    LoggingConfig logging = load("").logging();
    assertThat(logging.format()).isEqualTo(LogFormat.TEXT);
    assertThat(logging.keyFormat()).isEqualTo(KeyLogFormat.PLAIN);
    assertThat(logging.sourceLocation()).isEqualTo(LogSourceLocation.WARN);
  }

  @Test
  void each_source_location_is_taken() throws IOException {
    assertThat(load("source-location = none").logging().sourceLocation())
        .isEqualTo(LogSourceLocation.NONE);
    assertThat(load("format = json, source-location = all").logging().sourceLocation())
        .isEqualTo(LogSourceLocation.ALL);
  }

  @Test
  void an_unknown_source_location_is_one_problem_naming_the_setting_and_the_choices()
      throws IOException {
    List<String> problems;
    try {
      load("source-location = debug");
      throw new AssertionError("expected the config to be invalid");
    } catch (InvalidConfigException e) {
      problems = e.problems().stream().map(Object::toString).toList();
    }
    assertThat(problems)
        .singleElement()
        .asString()
        .contains("pubsub-worker.logging.source-location")
        .contains("none | warn | all")
        .contains("'debug'");
  }
}
