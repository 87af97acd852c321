package dev.pubsubworker.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigResolveOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The container image, checked from {@code docker/Dockerfile} (no Docker engine needed): the
 * runtime user is not root and owns nothing it executes or reads as config — no {@code COPY
 * --chown} to it, no {@code chown} to it, no {@code chmod} giving group or others write access, no
 * {@code RUN} after {@code USER} — the entrypoint runs the jar, and the health port is exposed.
 */
class DockerfileTest {

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

  /** One instruction: its keyword in upper case and its arguments, continuation lines joined. */
  record Instruction(String keyword, String args) {}

  static List<Instruction> parse(String dockerfile) {
    List<Instruction> instructions = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    for (String raw : dockerfile.lines().toList()) {
      String line = raw.strip();
      if (line.startsWith("#") || (line.isEmpty() && current.length() == 0)) {
        continue;
      }
      boolean continues = line.endsWith("\\");
      current.append(continues ? line.substring(0, line.length() - 1) : line).append(' ');
      if (!continues) {
        String text = current.toString().strip();
        current.setLength(0);
        if (text.isEmpty()) {
          continue;
        }
        int space = text.indexOf(' ');
        instructions.add(
            new Instruction(
                (space < 0 ? text : text.substring(0, space)).toUpperCase(Locale.ROOT),
                space < 0 ? "" : text.substring(space + 1).strip()));
      }
    }
    return instructions;
  }

  private static final Pattern CHOWN_OWNER = Pattern.compile("\\bchown\\s+(?:-\\S+\\s+)*(\\S+)");
  private static final Pattern CHMOD_MODE = Pattern.compile("\\bchmod\\s+(?:-\\S+\\s+)*(\\S+)");
  private static final Pattern COPY_CHOWN = Pattern.compile("--chown=(\\S+)");
  private static final Pattern COPY_CHMOD = Pattern.compile("--chmod=(\\S+)");

  /** Everything wrong with the image's file ownership and runtime user, one line each. */
  static List<String> problems(List<Instruction> instructions) {
    List<String> problems = new ArrayList<>();
    int userAt = -1;
    String user = null;
    for (int i = 0; i < instructions.size(); i++) {
      Instruction in = instructions.get(i);
      switch (in.keyword()) {
        case "USER" -> {
          user = in.args();
          userAt = i;
        }
        case "COPY", "ADD" -> {
          Matcher owner = COPY_CHOWN.matcher(in.args());
          if (owner.find() && !isRoot(owner.group(1))) {
            problems.add(in.keyword() + " --chown=" + owner.group(1) + " gives away " + in.args());
          }
          Matcher mode = COPY_CHMOD.matcher(in.args());
          if (mode.find() && grantsWriteToOthers(mode.group(1))) {
            problems.add(in.keyword() + " --chmod=" + mode.group(1) + " makes files writable");
          }
        }
        case "RUN" -> {
          if (userAt >= 0) {
            problems.add("RUN after USER runs as the runtime user: " + in.args());
          }
          Matcher owner = CHOWN_OWNER.matcher(in.args());
          while (owner.find()) {
            if (!isRoot(owner.group(1))) {
              problems.add("chown " + owner.group(1) + " gives the runtime user files");
            }
          }
          Matcher mode = CHMOD_MODE.matcher(in.args());
          while (mode.find()) {
            if (grantsWriteToOthers(mode.group(1))) {
              problems.add("chmod " + mode.group(1) + " makes files writable by non-root users");
            }
          }
        }
        default -> {}
      }
    }
    if (user == null) {
      problems.add("no USER: the container runs as root");
    } else if (isRoot(user)) {
      problems.add("USER " + user + " is root");
    } else if (!user.matches("\\d+(:\\d+)?")) {
      problems.add("USER " + user + " is not numeric (runAsNonRoot needs a numeric uid)");
    }
    return problems;
  }

  private static boolean isRoot(String owner) {
    String user = owner.split(":", 2)[0];
    return user.equals("root") || user.equals("0");
  }

  /** Whether a chmod mode adds write permission for group or others (or everyone). */
  private static boolean grantsWriteToOthers(String mode) {
    if (mode.matches("[0-7]{3,4}")) {
      String digits = mode.substring(mode.length() - 3);
      return (digits.charAt(1) - '0' & 2) != 0 || (digits.charAt(2) - '0' & 2) != 0;
    }
    for (String clause : mode.split(",")) {
      Matcher m = Pattern.compile("([ugoa]*)([+=])([rwxXst]*)").matcher(clause);
      if (m.matches() && m.group(3).contains("w")) {
        String who = m.group(1);
        if (who.isEmpty() || who.contains("g") || who.contains("o") || who.contains("a")) {
          return true;
        }
      }
    }
    return false;
  }

  @Test
  void the_runtime_user_is_not_root_and_owns_nothing_it_executes_or_reads_as_config()
      throws IOException {
    List<Instruction> image = parse(Files.readString(ROOT.resolve("docker/Dockerfile")));
    assertThat(problems(image)).isEmpty();
    assertThat(image).contains(new Instruction("USER", "10001:10001"));
    assertThat(image)
        .filteredOn(i -> i.keyword().equals("COPY"))
        .isNotEmpty()
        .allSatisfy(i -> assertThat(i.args()).containsPattern(" /app/"));
    // Group and others lose write access to everything copied, whatever the build context had.
    assertThat(image)
        .anySatisfy(
            i ->
                assertThat(i.args())
                    .contains("chown -R root:root /app")
                    .contains("chmod -R go-w /app"));
  }

  @Test
  void the_entrypoint_runs_the_jar_and_the_health_port_is_exposed() throws IOException {
    List<Instruction> image = parse(Files.readString(ROOT.resolve("docker/Dockerfile")));
    // The executable jar worker-app builds, not a library module's jar.
    assertThat(image)
        .contains(
            new Instruction("COPY", "worker-app/target/pubsub-worker.jar /app/pubsub-worker.jar"))
        .contains(
            new Instruction("ENTRYPOINT", "[\"java\", \"-jar\", \"/app/pubsub-worker.jar\"]"));
    Config reference =
        ConfigFactory.parseResources(WorkerCli.class.getClassLoader(), "reference.conf")
            .resolve(ConfigResolveOptions.noSystem());
    int port = reference.getInt("pubsub-worker.observability.http-port");
    assertThat(image).contains(new Instruction("EXPOSE", Integer.toString(port)));
    String deployment = Files.readString(ROOT.resolve("docker/k8s/base/deployment.yaml"));
    assertThat(deployment)
        .contains("runAsUser: 10001")
        .contains("readOnlyRootFilesystem: true")
        .contains("mountPath: /tmp");
  }

  @Test
  void the_checks_catch_an_image_that_gives_the_runtime_user_its_files() {
    String handedOver =
        """
        FROM eclipse-temurin:17-jre
        # COPY --chown=root:root in a comment does not count
        COPY --chown=worker:worker app.jar /app/app.jar
        COPY --chmod=0777 config/ /app/config/
        RUN chown -R 10001:10001 /app \\
         && chmod -R o+w /app/plugins && chmod 0664 /app/app.jar
        USER 10001:10001
        RUN touch /tmp/x
        """;
    assertThat(problems(parse(handedOver)))
        .containsExactly(
            "COPY --chown=worker:worker gives away --chown=worker:worker app.jar /app/app.jar",
            "COPY --chmod=0777 makes files writable",
            "chown 10001:10001 gives the runtime user files",
            "chmod o+w makes files writable by non-root users",
            "chmod 0664 makes files writable by non-root users",
            "RUN after USER runs as the runtime user: touch /tmp/x");
    assertThat(problems(parse("FROM x\nUSER root\n"))).containsExactly("USER root is root");
    assertThat(problems(parse("FROM x\n"))).containsExactly("no USER: the container runs as root");
  }
}
