package dev.pubsubworker.app;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigResolveOptions;
import dev.pubsubworker.runtime.worker.Worker;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Compute Engine files in {@code docker/gce}: the systemd unit stops the worker with SIGTERM
 * and waits longer than its graceful stop can take, runs it as a dedicated non-root user with
 * hardening and JSON logs to journald, and restarts it on failure but not on a bad config; the
 * managed instance group's startup script is valid bash and writes a config that passes {@code
 * check-config}, shares a lock store, keeps secrets out of it, and is the file the unit runs.
 */
class ComputeEngineFilesTest {

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final Path UNIT = ROOT.resolve("docker/gce/pubsub-worker.service");
  private static final Path SCRIPT = ROOT.resolve("docker/gce/startup-script.sh");

  /** {@code cat > PATH <<'CONF'} ... {@code CONF}: the config the script writes. */
  private static final Pattern CONFIG_HEREDOC =
      Pattern.compile("(?s)cat > (\\S+\\.conf) <<'CONF'\\n(.*?)\\nCONF\\n");

  @TempDir Path dir;

  /** The unit's settings per section; a key that repeats keeps every value, in order. */
  static Map<String, Map<String, List<String>>> unit() throws IOException {
    Map<String, Map<String, List<String>>> sections = new LinkedHashMap<>();
    Map<String, List<String>> section = null;
    for (String raw : Files.readAllLines(UNIT)) {
      String line = raw.strip();
      if (line.isEmpty() || line.startsWith("#") || line.startsWith(";")) {
        continue;
      }
      if (line.startsWith("[")) {
        section =
            sections.computeIfAbsent(
                line.substring(1, line.length() - 1), s -> new LinkedHashMap<>());
        continue;
      }
      int eq = line.indexOf('=');
      assertThat(eq).as("unit line '" + line + "'").isPositive();
      assertThat(section).as("unit line outside a section: " + line).isNotNull();
      section
          .computeIfAbsent(line.substring(0, eq), k -> new ArrayList<>())
          .add(line.substring(eq + 1));
    }
    return sections;
  }

  static String service(String key) throws IOException {
    List<String> values = unit().get("Service").get(key);
    assertThat(values).as("[Service] " + key).isNotNull().hasSize(1);
    return values.get(0);
  }

  /** The config the startup script writes, as text, and the path it writes it to. */
  static Matcher scriptConfig() throws IOException {
    Matcher m = CONFIG_HEREDOC.matcher(Files.readString(SCRIPT));
    assertThat(m.find()).as("the startup script writes a config with cat > FILE <<'CONF'").isTrue();
    return m;
  }

  @Test
  void systemd_stops_the_worker_with_sigterm_and_waits_longer_than_its_graceful_stop()
      throws IOException {
    assertThat(service("KillSignal")).isEqualTo("SIGTERM");
    assertThat(service("KillMode")).isIn("mixed", "control-group");
    Config config =
        ConfigFactory.parseString(scriptConfig().group(2))
            .withFallback(KubernetesManifestsTest.reference())
            .resolve(ConfigResolveOptions.noSystem());
    long grace = config.getDuration("pubsub-worker.shutdown-grace").toSeconds();
    Matcher timeout = Pattern.compile("(\\d+)s?").matcher(service("TimeoutStopSec"));
    assertThat(timeout.matches()).as("TimeoutStopSec in seconds").isTrue();
    assertThat(Long.parseLong(timeout.group(1)))
        .as("TimeoutStopSec: above shutdown-grace (%ds) + the stop bound + margin", grace)
        .isGreaterThanOrEqualTo(grace + Worker.STOP_BOUND.toSeconds() + 10);
    assertThat(service("SuccessExitStatus").split(" ")).contains("0");
  }

  @Test
  void it_restarts_on_failure_but_not_on_a_bad_config() throws IOException {
    assertThat(service("Restart")).isEqualTo("on-failure");
    assertThat(service("RestartPreventExitStatus").split(" ")).contains("2");
  }

  @Test
  void a_dedicated_non_root_user_runs_it_hardened_with_json_logs_to_journald() throws IOException {
    String user = service("User");
    assertThat(user).isNotBlank().isNotIn("root", "0");
    assertThat(user).as("a named, dedicated user the script creates").doesNotMatch("\\d+");
    assertThat(Files.readString(SCRIPT)).contains("useradd --system").contains(user);
    assertThat(service("NoNewPrivileges")).isEqualTo("yes");
    assertThat(service("ProtectSystem")).isEqualTo("strict");
    assertThat(service("PrivateTmp")).isEqualTo("yes");
    assertThat(service("CapabilityBoundingSet")).isEmpty();
    assertThat(service("StandardOutput")).isEqualTo("journal");
    assertThat(unit().get("Service").get("Environment")).contains("PUBSUB_WORKER_LOG_FORMAT=json");
    assertThat(unit().get("Install").get("WantedBy")).containsExactly("multi-user.target");
  }

  @Test
  void the_unit_runs_the_config_the_script_writes_with_the_images_jvm_flags() throws IOException {
    Matcher config = scriptConfig();
    assertThat(service("ExecStart"))
        .matches(
            "/usr/bin/java -jar \\S+/pubsub-worker\\.jar run --config "
                + Pattern.quote(config.group(1)));
    // The same JVM flags as the container image (`%%` is systemd's escaped `%`).
    Matcher image =
        Pattern.compile("JAVA_TOOL_OPTIONS=\"([^\"]*)\"")
            .matcher(Files.readString(ROOT.resolve("docker/Dockerfile")));
    assertThat(image.find()).isTrue();
    assertThat(unit().get("Service").get("Environment"))
        .contains("\"JAVA_TOOL_OPTIONS=" + image.group(1).replace("%", "%%") + "\"");
    String script = Files.readString(SCRIPT);
    assertThat(script).contains("/etc/systemd/system/" + UNIT.getFileName());
    assertThat(service("EnvironmentFile")).isEqualTo("/etc/pubsub-worker/worker.env");
    assertThat(script).containsPattern("(?s)umask 077.*> /etc/pubsub-worker/worker\\.env");
  }

  @Test
  void the_script_is_valid_bash() throws Exception {
    Process p =
        new ProcessBuilder("bash", "-n", SCRIPT.toString()).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes());
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(output).isZero();
  }

  @Test
  void the_scripts_config_shares_a_lock_store_keeps_secrets_out_and_passes_check_config()
      throws Exception {
    String text = scriptConfig().group(2);
    Config config =
        ConfigFactory.parseString(text)
            .withFallback(KubernetesManifestsTest.reference())
            .resolve(ConfigResolveOptions.noSystem());
    assertThat(config.getString("pubsub-worker.lock-store.type")).isNotEqualTo("in-memory");
    assertThat(KubernetesManifestsTest.settings(text))
        .doesNotContainPattern("(?i)://[^/@\\s\"]+:[^/@\\s\"]+@|[?;&]password=")
        .doesNotContainPattern("(?i)\"password\":\"[^\"]+\"");
    // The same store and worker settings as on GKE: one fleet can span both.
    KubernetesManifestsTest.Rendered gke = KubernetesManifestsTest.Rendered.of("keda");
    assertThat(config.getConfig("pubsub-worker.lock-store"))
        .isEqualTo(gke.config().getConfig("pubsub-worker.lock-store"));

    Path file = dir.resolve("worker.conf");
    Files.writeString(file, text);
    Path log = dir.resolve("check-config.log");
    ProcessBuilder pb =
        AppProcess.builderWithoutExamplePlugin(log, "check-config", "--config", file.toString())
            .directory(ROOT.toFile());
    Map<String, String> env = pb.environment();
    env.keySet().removeIf(k -> k.startsWith("PUBSUB_WORKER_") || k.endsWith("_EMULATOR_HOST"));
    env.put("GOOGLE_CLOUD_PROJECT", "sample-project");
    env.put("PUBSUB_WORKER_PLUGINS_DIR", ROOT.resolve("plugins/orders-example/target").toString());
    Process p = pb.start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    String output = Files.readString(log);
    assertThat(p.exitValue()).as(output).isZero();
    assertThat(output).contains("config OK");
  }
}
