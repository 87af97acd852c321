package dev.pubsubworker.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CheckConfigCommandTest {

  @TempDir Path dir;

  private Path write(String hocon) throws IOException {
    Path file = dir.resolve("worker.conf");
    Files.writeString(file, hocon);
    return file;
  }

  @Test
  void a_jdbc_url_with_a_password_in_the_query_and_the_password_setting_prints_neither()
      throws IOException {
    Path file =
        write(
            """
            pubsub-worker {
              project-id = shop
              pubsub-emulator-host = "127.0.0.1:1"
              lock-store {
                type = sql
                sql {
                  jdbc-url = "jdbc:postgresql://db:5432/orders?user=app&password=0t@her%2F&ssl=true"
                  password = "th1rd"
                }
              }
              subscriptions { orders { handler = orders } }
            }
            """);
    CliRun run = CliRun.of("check-config", "--config", file.toString());
    assertThat(run.exitCode()).isZero();
    assertThat(run.out())
        .contains("jdbc:postgresql://db:5432/orders?user=app&password=***&ssl=true")
        .contains("password=***,")
        .doesNotContain("0t@her")
        .doesNotContain("th1rd");
  }

  @Test
  void a_jdbc_url_with_a_password_in_userinfo_is_refused_without_printing_it() throws IOException {
    Path file =
        write(
            """
            pubsub-worker {
              project-id = shop
              lock-store {
                type = sql
                sql.jdbc-url = "jdbc:postgresql://app:p@ss:w%2Frd@db:5432/orders?ssl=true"
              }
              subscriptions { orders { handler = orders } }
            }
            """);
    CliRun run = CliRun.of("check-config", "--config", file.toString());
    assertThat(run.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(run.err())
        .startsWith(
            "error: 1 configuration problem\n  pubsub-worker.lock-store.sql.jdbc-url: has"
                + " user:password@ before the host, which PostgreSQL's driver does not read")
        .contains("put the user and password in lock-store.sql.user and lock-store.sql.password")
        .doesNotContain("p@ss")
        .doesNotContain("w%2Frd")
        .doesNotContain("w/rd");
    assertThat(run.out()).isEmpty();
  }

  @Test
  void a_poison_exception_class_the_handler_cannot_load_is_a_config_problem() throws IOException {
    Path file =
        write(
            """
            pubsub-worker {
              project-id = shop
              subscriptions {
                orders {
                  handler = orders
                  poison-exceptions = ["com.example.NoSuchException"]
                  dead-letter-topic = "projects/shop/topics/orders-dead"
                }
              }
            }
            """);
    CliRun run = CliRun.of("check-config", "--config", file.toString());
    assertThat(run.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(run.err())
        .contains(
            "pubsub-worker.subscriptions.orders.poison-exceptions: lists"
                + " com.example.NoSuchException, a class that the handler 'orders' cannot load"
                + " (not on its plugin's class path) ("
                + file
                + ":6)")
        .doesNotContain("\tat ");
  }

  @Test
  void a_misspelled_root_is_refused_alike_from_config_and_from_the_config_file_property()
      throws IOException {
    Path file =
        write(
            """
            pubsub-wroker {
              project-id = shop
              subscriptions { orders { handler = orders } }
            }
            """);
    String expected =
        "pubsub-wroker: unknown setting; did you mean 'pubsub-worker'? (" + file + ":1)";
    CliRun flag = CliRun.of("check-config", "--config", file.toString());
    assertThat(flag.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(flag.err()).contains(expected).doesNotContain("project-id");

    String previous = System.getProperty("config.file");
    System.setProperty("config.file", file.toString());
    CliRun property;
    try {
      property = CliRun.of("check-config");
    } finally {
      if (previous == null) {
        System.clearProperty("config.file");
      } else {
        System.setProperty("config.file", previous);
      }
      ConfigFactory.invalidateCaches();
    }
    assertThat(property.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(property.err()).isEqualTo(flag.err());
  }

  @Test
  void every_problem_is_printed_with_path_and_origin_and_no_stack_trace() throws IOException {
    Path file =
        write(
            """
            pubsub-worker {
              project-id = shop
              subscriptions {
                orders { handler = ordrs, lease = soon }
              }
            }
            """);
    CliRun run = CliRun.of("check-config", "--config", file.toString());
    assertThat(run.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(run.err())
        .contains(
            "pubsub-worker.subscriptions.orders.lease: expected a duration such as 30s, 5m or 24h,"
                + " but got 'soon' ("
                + file
                + ":4)")
        .doesNotContain("\tat ")
        .doesNotContain("Exception");
  }

  @Test
  void settings_the_lock_store_refuses_are_config_problems_with_their_path() throws IOException {
    Path sql =
        write(
            """
            pubsub-worker {
              project-id = shop
              lock-store { type = sql, sql.table = "locks; DROP TABLE x" }
              subscriptions { orders { handler = orders } }
            }
            """);
    CliRun bad = CliRun.of("check-config", "--config", sql.toString());
    assertThat(bad.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(bad.err()).contains("pubsub-worker.lock-store.sql.table: ").doesNotContain("\tat ");
    Path redis =
        write(
            """
            pubsub-worker {
              project-id = shop
              lock-store { type = redis, redis.uri = "http://redis:6379" }
              subscriptions { orders { handler = orders } }
            }
            """);
    CliRun badUri = CliRun.of("check-config", "--config", redis.toString());
    assertThat(badUri.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(badUri.err()).contains("pubsub-worker.lock-store.redis.uri: ");
  }

  @Test
  void an_unknown_handler_names_the_handlers_that_exist() throws IOException {
    Path file =
        write("pubsub-worker { project-id = shop, subscriptions { o { handler = ordrs } } }");
    CliRun run = CliRun.of("check-config", "--config", file.toString());
    assertThat(run.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(run.err())
        .contains(
            "pubsub-worker.subscriptions.o.handler: no plugin binds a handler named 'ordrs';"
                + " handlers found: orders");
  }

  @Test
  void a_bad_flag_is_one_line_and_a_usage_hint() {
    CliRun run = CliRun.of("check-config", "--confg", "x");
    assertThat(run.exitCode()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(run.err())
        .contains("error: Unknown options: '--confg'")
        .contains("(see: pubsub-worker check-config --help)")
        .doesNotContain("\tat ");
  }

  @Test
  void help_and_version_work_on_every_command() {
    assertThat(CliRun.of("--version").out()).startsWith("pubsub-worker ");
    for (String command : new String[] {"run", "check-config"}) {
      CliRun help = CliRun.of(command, "--help");
      assertThat(help.exitCode()).isZero();
      assertThat(help.out()).contains("Usage: pubsub-worker " + command);
      assertThat(CliRun.of(command, "--version").exitCode()).isZero();
    }
  }
}
