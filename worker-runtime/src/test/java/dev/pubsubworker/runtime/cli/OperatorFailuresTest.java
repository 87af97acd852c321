package dev.pubsubworker.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import dev.pubsubworker.runtime.testing.CliProcess;
import dev.pubsubworker.testservices.PubSubEmulator;
import dev.pubsubworker.testservices.SqlDatabase;
import dev.pubsubworker.testservices.TcpProxy;
import dev.pubsubworker.testservices.TestServices;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Operator commands fail in one plain line with the README's exit code: a lock store of every kind
 * that cannot be reached or refuses the login (exit 3, within the store's connect timeout), a
 * config file that is not a readable file, and bad arguments (exit 2).
 */
class OperatorFailuresTest {

  /** Bounds every failing command: the stores below are configured to give up within 2 s. */
  private static final Duration BOUND = Duration.ofSeconds(30);

  @TempDir Path dir;

  private Path config(String lockStore) throws IOException {
    Path file = dir.resolve("worker.conf");
    Files.writeString(
        file,
        """
        pubsub-worker {
          project-id = "p"
          lock-store { %s }
          subscriptions { orders { handler = orders } }
        }
        """
            .formatted(lockStore));
    return file;
  }

  /** The first line on stderr, after checking nothing internal leaked into any line. */
  private static String oneLine(CliRun run) {
    assertThat(run.err())
        .doesNotContain("\tat ")
        .doesNotContain("Exception")
        .doesNotContain("com.google.inject")
        .doesNotContain("Guice");
    List<String> lines = run.err().lines().filter(l -> !l.startsWith("(run with")).toList();
    assertThat(lines).as(run.err()).hasSize(1);
    return lines.get(0);
  }

  static List<Object[]> unreachableStores() {
    SqlDatabase pg = TestServices.postgres();
    SqlDatabase maria = TestServices.mariadb();
    String pgBase = pg.jdbcUrl().replaceFirst("/[^/?]*(\\?.*)?$", "");
    String mariaBase = maria.jdbcUrl().replaceFirst("/[^/?]*(\\?.*)?$", "");
    String sql = "type = sql, sql { connect-timeout = 2s, create-table = true, ";
    return List.of(
        new Object[] {
          "redis down", "type = redis, redis.uri = \"redis://127.0.0.1:9\"", "redis", "127.0.0.1"
        },
        new Object[] {
          "redis unknown user",
          "type = redis, redis.uri = \"redis://no_such_user:wrong-password@"
              + TestServices.redis().uri().replaceFirst("^redis://(.*@)?", "")
              + "\"",
          "redis",
          "WRONGPASS"
        },
        new Object[] {
          "postgres down",
          sql + "jdbc-url = \"jdbc:postgresql://127.0.0.1:9/test\" }",
          "SQL",
          "127.0.0.1:9"
        },
        new Object[] {
          "postgres missing database",
          sql + "jdbc-url = \"" + pgBase + "/no_such_db_9\", user = \"" + pg.user() + "\" }",
          "SQL",
          "no_such_db_9"
        },
        new Object[] {
          "postgres unknown role",
          sql + "jdbc-url = \"" + pg.jdbcUrl() + "\", user = \"no_such_role_9\" }",
          "SQL",
          "no_such_role_9"
        },
        new Object[] {
          "mariadb down",
          sql + "jdbc-url = \"jdbc:mariadb://127.0.0.1:9/test\" }",
          "SQL",
          "127.0.0.1"
        },
        new Object[] {
          "mariadb bad password",
          sql
              + "jdbc-url = \""
              + maria.jdbcUrl()
              + "\", user = \""
              + maria.user()
              + "\", password = \"wrong-password\" }",
          "SQL",
          "denied"
        },
        new Object[] {
          "mariadb missing database",
          sql
              + "jdbc-url = \""
              + mariaBase
              + "/no_such_db_9\", user = \""
              + maria.user()
              + "\", password = \""
              + maria.password()
              + "\" }",
          "SQL",
          "no_such_db_9"
        },
        new Object[] {
          "datastore emulator down",
          "type = datastore, datastore.emulator-host = \"127.0.0.1:9\"",
          "datastore",
          "127.0.0.1:9"
        });
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("unreachableStores")
  void inspect_forget_and_purge_on_a_store_that_fails_are_one_line_and_exit_3(
      String name, String lockStore, String store, String cause) throws IOException {
    Path file = config(lockStore);
    for (String[] args :
        List.of(
            new String[] {"inspect", "orders:1", "--config", file.toString()},
            new String[] {"forget", "orders:1", "--yes", "--config", file.toString()},
            new String[] {"purge", "--config", file.toString()})) {
      CliRun run = assertTimeoutPreemptively(BOUND, () -> CliRun.of(args));
      assertThat(run.exitCode()).as(args[0] + ": " + run.err()).isEqualTo(ExitCodes.UNAVAILABLE);
      assertThat(oneLine(run))
          .as(args[0])
          .startsWith("error: ")
          .containsIgnoringCase(store)
          .contains(cause)
          .doesNotContain("wrong-password");
    }
  }

  @Test
  void run_on_a_store_that_fails_is_one_line_and_exit_3_as_a_process() throws Exception {
    PubSubEmulator pubsub = TestServices.pubsub();
    Path file = dir.resolve("run.conf");
    Files.writeString(
        file,
        """
        pubsub-worker {
          project-id = "%s"
          pubsub-emulator-host = "%s"
          lock-store {
            type = sql, sql { connect-timeout = 2s, jdbc-url = "jdbc:postgresql://127.0.0.1:9/x" }
          }
          subscriptions { orders { name = "%s", handler = orders } }
        }
        """
            .formatted(pubsub.projectId(), pubsub.hostPort(), TestServices.uniqueName("sub")));
    Path log = dir.resolve("run.log");
    Process p = CliProcess.builder(log, "run", "--config", file.toString()).start();
    assertThat(p.waitFor(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
    String output = Files.readString(log);
    assertThat(p.exitValue()).as(output).isEqualTo(ExitCodes.UNAVAILABLE);
    List<String> errors = output.lines().filter(l -> l.startsWith("error: ")).toList();
    assertThat(errors).singleElement().asString().contains("SQL").contains("127.0.0.1:9");
    // The readiness probe may log the store's failure (with its trace, once), never Guice's.
    assertThat(output)
        .doesNotContain("ProvisionException")
        .doesNotContain("[Guice/")
        .doesNotContain("classname legend");
  }

  @Test
  void a_config_path_that_is_a_folder_or_missing_is_its_own_line_and_exit_2() throws IOException {
    Path folder = Files.createDirectories(dir.resolve("conf.d"));
    CliRun run = CliRun.of("inspect", "k", "--config", folder.toString());
    assertThat(run.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(run.err()).contains("config file: " + folder + " is a folder, not a config file");
    CliRun missing = CliRun.of("check-config", "--config", dir.resolve("nope.conf").toString());
    assertThat(missing.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(missing.err()).contains("config file: no such file: " + dir.resolve("nope.conf"));
  }

  @Test
  void bad_arguments_are_a_plain_line_and_exit_2() throws IOException {
    Path file = config("type = in-memory");
    CliRun emptyKey = CliRun.of("inspect", "", "--config", file.toString());
    assertThat(emptyKey.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(oneLine(emptyKey)).isEqualTo("error: KEY must not be empty");
    CliRun forgetEmpty = CliRun.of("forget", "", "--yes", "--config", file.toString());
    assertThat(forgetEmpty.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);

    CliRun surrogate = CliRun.of("inspect", "bad\uD800key", "--config", file.toString());
    assertThat(surrogate.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(oneLine(surrogate)).startsWith("error: KEY: ");

    CliRun dataFile =
        CliRun.of(
            "publish",
            "--config",
            file.toString(),
            "--topic",
            "t",
            "--data-file",
            "/nonexistent/payload.json");
    assertThat(dataFile.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(oneLine(dataFile))
        .isEqualTo("error: --data-file /nonexistent/payload.json: no such file");

    CliRun folder =
        CliRun.of(
            "publish", "--config", file.toString(), "--topic", "t", "--data-file", dir.toString());
    assertThat(folder.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(oneLine(folder)).contains("is a folder");

    CliRun flag = CliRun.of("inspect", "k", "--jsn", "--config", file.toString());
    assertThat(flag.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(flag.err()).startsWith("error: Unknown option: '--jsn'").doesNotContain("\tat ");

    CliRun number = CliRun.of("purge", "--batch-size", "many", "--config", file.toString());
    assertThat(number.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(number.err()).doesNotContain("Exception");
  }

  @Test
  void publishing_to_a_topic_that_does_not_exist_is_one_line_and_exit_3() throws IOException {
    PubSubEmulator pubsub = TestServices.pubsub();
    Path file = dir.resolve("pub.conf");
    Files.writeString(
        file,
        """
        pubsub-worker {
          project-id = "%s"
          pubsub-emulator-host = "%s"
          subscriptions { orders { handler = orders } }
        }
        """
            .formatted(pubsub.projectId(), pubsub.hostPort()));
    String topic = TestServices.uniqueName("missing");
    CliRun run =
        assertTimeoutPreemptively(
            BOUND,
            () ->
                CliRun.of("publish", "--config", file.toString(), "--topic", topic, "--data", "x"));
    assertThat(run.exitCode()).isEqualTo(ExitCodes.UNAVAILABLE);
    assertThat(oneLine(run))
        .startsWith("error: publishing to topic " + topic + " failed: NOT_FOUND");
  }

  @Test
  void publishing_to_an_unreachable_emulator_gives_up_at_the_timeout_with_exit_3()
      throws IOException {
    Path file = dir.resolve("unreachable.conf");
    Files.writeString(
        file,
        """
        pubsub-worker {
          project-id = "p"
          pubsub-emulator-host = "127.0.0.1:9"
          subscriptions { orders { handler = orders } }
        }
        """);
    assertThat(publishOrders(file, "2s"))
        .isEqualTo(
            "error: publishing to topic orders failed: the Pub/Sub emulator at 127.0.0.1:9 did not"
                + " accept the messages within 2s (--timeout); is it running and reachable?");
  }

  /** {@code publish} of one message to topic orders with {@code timeout}: its one line, exit 3. */
  private static String publishOrders(Path config, String timeout) {
    CliRun run =
        assertTimeoutPreemptively(
            BOUND,
            () ->
                CliRun.of(
                    "publish",
                    "--config",
                    config.toString(),
                    "--topic",
                    "orders",
                    "--data",
                    "x",
                    "--timeout",
                    timeout));
    assertThat(run.exitCode()).as(run.err()).isEqualTo(ExitCodes.UNAVAILABLE);
    return oneLine(run);
  }

  @Test
  void publishing_to_an_emulator_that_does_not_answer_gives_up_at_the_timeout() throws Exception {
    PubSubEmulator pubsub = TestServices.pubsub();
    try (TcpProxy frozen = TcpProxy.start(pubsub.hostPort())) {
      frozen.freeze();
      Path file = dir.resolve("frozen.conf");
      Files.writeString(
          file,
          """
          pubsub-worker {
            project-id = "%s"
            pubsub-emulator-host = "%s"
            subscriptions { orders { handler = orders } }
          }
          """
              .formatted(pubsub.projectId(), frozen.hostPort()));
      assertThat(publishOrders(file, "10s"))
          .startsWith("error: publishing to topic orders failed: ")
          .contains("did not accept the messages within 10s (--timeout)");
    }
  }

  @Test
  void a_timeout_that_is_no_duration_is_a_bad_argument() throws IOException {
    Path file = config("type = in-memory");
    CliRun run =
        CliRun.of(
            "publish",
            "--config",
            file.toString(),
            "--topic",
            "t",
            "--data",
            "x",
            "--timeout",
            "soon");
    assertThat(run.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(oneLine(run))
        .isEqualTo(
            "error: --timeout must be a positive whole number of ms, s or m (such as 30s), but was"
                + " 'soon'");
  }

  /** The README's exit-code table lists exactly the codes the command line uses. */
  @Test
  void the_readme_exit_code_table_matches_the_code() throws Exception {
    String readme = Files.readString(Path.of("..", "README.md"));
    Matcher table =
        Pattern.compile("(?s)\\| exit \\| meaning \\|\\n\\|---\\|---\\|\\n(.*?)\\n\\n")
            .matcher(readme);
    assertThat(table.find()).as("the README has an exit-code table").isTrue();
    List<Integer> documented = new ArrayList<>();
    for (String row : table.group(1).split("\\n")) {
      documented.add(Integer.parseInt(row.replaceFirst("^\\| (\\d+) \\|.*", "$1")));
    }
    Map<Integer, String> used = new TreeMap<>();
    for (Field f : ExitCodes.class.getDeclaredFields()) {
      if (Modifier.isStatic(f.getModifiers()) && f.getType() == int.class) {
        f.setAccessible(true);
        used.put(f.getInt(null), f.getName());
      }
    }
    assertThat(documented).containsExactlyElementsOf(used.keySet());
    assertThat(used)
        .containsEntry(0, "OK")
        .containsEntry(1, "FAILURE")
        .containsEntry(2, "BAD_CONFIG")
        .containsEntry(3, "UNAVAILABLE")
        .containsEntry(4, "NOT_EXACTLY_ONCE")
        .containsEntry(130, "HALTED");
  }
}
