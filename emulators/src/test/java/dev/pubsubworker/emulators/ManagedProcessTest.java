package dev.pubsubworker.emulators;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ManagedProcessTest {

  @TempDir Path workDir;

  /** Ready once the process has written "ready" to its log. */
  private ManagedProcess.ReadinessProbe logSays(String word) {
    return port -> {
      for (Path log : Files.newDirectoryStream(workDir, "*-" + port + ".log")) {
        if (Files.readString(log, StandardCharsets.UTF_8).contains(word)) {
          return;
        }
      }
      throw new IOException("no '" + word + "' in the log yet");
    };
  }

  @Test
  void close_stops_the_whole_process_tree() throws Exception {
    // A wrapper shell with a child, like the Datastore and Firestore launchers.
    ManagedProcess process =
        ManagedProcess.start(
            "tree",
            workDir,
            port -> List.of("sh", "-c", "sleep 600 & echo ready on " + port + "; wait"),
            Map.of(),
            logSays("ready"),
            Duration.ofSeconds(30));
    ProcessHandle wrapper = ProcessHandle.of(process.pid()).orElseThrow();
    List<ProcessHandle> children = wrapper.descendants().toList();
    assertThat(children).isNotEmpty();
    assertThat(process.logFile()).hasFileName("tree-" + process.port() + ".log");
    assertThat(Files.readString(process.logFile())).contains("ready on " + process.port());

    process.close();

    assertThat(wrapper.isAlive()).isFalse();
    assertThat(children).noneMatch(ProcessHandle::isAlive);
    process.close(); // idempotent
  }

  @Test
  void a_process_that_exits_early_is_reported_with_its_log() {
    assertThatThrownBy(
            () ->
                ManagedProcess.start(
                    "crashing",
                    workDir,
                    port -> List.of("sh", "-c", "echo something broke; exit 3"),
                    Map.of(),
                    logSays("never"),
                    Duration.ofSeconds(30)))
        .isInstanceOf(IOException.class)
        .hasMessageMatching(
            "crashing exited with code 3 before answering on 127\\.0\\.0\\.1:\\d+; see .*"
                + "crashing-\\d+\\.log \\(last line: something broke\\)");
  }

  @Test
  void a_process_that_never_answers_times_out_and_is_stopped() throws Exception {
    assertThatThrownBy(
            () ->
                ManagedProcess.start(
                    "silent",
                    workDir,
                    port -> List.of("sh", "-c", "echo $$ > pid; exec sleep 600"),
                    Map.of(),
                    logSays("never"),
                    Duration.ofSeconds(2)))
        .isInstanceOf(IOException.class)
        .hasMessageMatching(
            "silent did not answer on 127\\.0\\.0\\.1:\\d+ within 2\\.0 s \\(last check: no 'never'"
                + " in the log yet\\); see .*silent-\\d+\\.log");
    long pid = Long.parseLong(Files.readString(workDir.resolve("pid")).strip());
    assertThat(ProcessHandle.of(pid).filter(ProcessHandle::isAlive)).isEmpty();
  }

  @Test
  void a_taken_port_is_retried_on_another_then_reported() throws IOException {
    assertThatThrownBy(
            () ->
                ManagedProcess.start(
                    "unlucky",
                    workDir,
                    port ->
                        List.of(
                            "sh",
                            "-c",
                            "echo 'java.net.BindException: Address already in use'; exit 1"),
                    Map.of(),
                    logSays("never"),
                    Duration.ofSeconds(30)))
        .isInstanceOf(IOException.class)
        .hasMessageStartingWith("unlucky found port ");
    try (var logs = Files.list(workDir)) {
      assertThat(logs.filter(p -> p.getFileName().toString().startsWith("unlucky-"))).hasSize(3);
    }
  }

  @Test
  void extra_environment_reaches_the_process() throws Exception {
    ManagedProcess process =
        ManagedProcess.start(
            "env",
            workDir,
            port -> List.of("sh", "-c", "echo value=$TEST_SERVICES_PROBE; exec sleep 600"),
            Map.of("TEST_SERVICES_PROBE", "forty-two"),
            logSays("value="),
            Duration.ofSeconds(30));
    try {
      assertThat(Files.readString(process.logFile())).contains("value=forty-two");
    } finally {
      process.close();
    }
  }
}
