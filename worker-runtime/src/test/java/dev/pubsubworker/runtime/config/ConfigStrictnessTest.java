package dev.pubsubworker.runtime.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigResolveOptions;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Settings that would be misread or that the guard cannot keep are refused, one line each: bare
 * numbers for durations and sizes, leases too short to heartbeat, ttl below the lease, ranges,
 * host:port and JDBC URL syntax, unknown root keys, unreadable files.
 */
class ConfigStrictnessTest {

  @TempDir Path dir;

  private static final String SUBSCRIPTION =
      "pubsub-worker.subscriptions.orders { name = orders-sub, handler = orders }\n";

  private WorkerConfig load(String hocon) throws IOException {
    Path file = dir.resolve("worker.conf");
    Files.writeString(file, "pubsub-worker.project-id = p\n" + SUBSCRIPTION + hocon);
    return WorkerConfig.loadFile(file, getClass().getClassLoader());
  }

  private List<String> problems(String hocon) throws IOException {
    try {
      load(hocon);
    } catch (InvalidConfigException e) {
      return e.problems().stream().map(p -> p.toString().replace(dir + "/", "")).toList();
    }
    return List.of();
  }

  @Test
  void a_bare_number_for_a_duration_is_refused_with_the_unit_it_needs() throws IOException {
    assertThat(problems("pubsub-worker.subscription-defaults.lease = 5\n"))
        .containsExactly(
            "pubsub-worker.subscription-defaults.lease: a duration needs a unit, such as 5s"
                + " (worker.conf:3)");
    assertThat(problems("pubsub-worker.subscriptions.orders.lease = \"5\"\n"))
        .containsExactly(
            "pubsub-worker.subscriptions.orders.lease: a duration needs a unit, such as 5s"
                + " (worker.conf:3)");
  }

  @Test
  void a_bare_number_for_a_size_is_refused() throws IOException {
    assertThat(
            problems(
                "pubsub-worker.subscription-defaults.flow-control.max-outstanding-bytes = 100\n"))
        .containsExactly(
            "pubsub-worker.subscription-defaults.flow-control.max-outstanding-bytes: a size needs"
                + " a unit, such as 100MiB, or 100B for bytes (worker.conf:3)");
    assertThat(
            load("pubsub-worker.subscription-defaults.flow-control.max-outstanding-bytes = 100B\n")
                .subscriptions()
                .get("orders")
                .client()
                .maxOutstandingBytes())
        .isEqualTo(100);
  }

  /** Every duration and size reference.conf has, found by its value, refuses a bare number. */
  @Test
  void every_duration_and_size_in_reference_conf_needs_a_unit() throws IOException {
    Config reference =
        ConfigFactory.parseResources(getClass().getClassLoader(), "reference.conf")
            .resolve(ConfigResolveOptions.noSystem())
            .getConfig(WorkerConfig.ROOT);
    List<String> checked = new ArrayList<>();
    for (Map.Entry<String, ConfigValue> e : reference.entrySet()) {
      ConfigValue v = e.getValue();
      if (v.valueType() != ConfigValueType.STRING
          || !String.valueOf(v.unwrapped()).matches("\\d+\\s*[A-Za-z]+")) {
        continue;
      }
      String path = WorkerConfig.ROOT + "." + e.getKey();
      assertThat(problems(path + " = 7\n"))
          .as(path)
          .singleElement()
          .asString()
          .startsWith(path + ": a ")
          .contains(" needs a unit, such as 7");
      checked.add(e.getKey());
    }
    assertThat(checked)
        .contains(
            "shutdown-grace",
            "subscription-defaults.lease",
            "subscription-defaults.ttl",
            "subscription-defaults.flow-control.max-outstanding-bytes",
            "lock-store.redis.command-timeout",
            "lock-store.sql.connect-timeout",
            "observability.lock-store-stale-after");
  }

  @Test
  void a_lease_too_short_to_heartbeat_is_refused_and_one_second_is_accepted() throws IOException {
    assertThat(problems("pubsub-worker.subscriptions.orders.lease = 500ms\n"))
        .containsExactly(
            "pubsub-worker.subscriptions.orders.lease: must be at least 1s, but was '500ms'"
                + " (worker.conf:3)");
    assertThat(load("pubsub-worker.subscriptions.orders.lease = 1s\n").subscriptions())
        .extractingByKey("orders")
        .extracting(s -> s.guard().lease())
        .isEqualTo(Duration.ofSeconds(1));
  }

  @Test
  void a_ttl_below_the_lease_is_refused_for_lock_but_not_for_mutex() throws IOException {
    assertThat(problems("pubsub-worker.subscriptions.orders { lease = 60s, ttl = 30s }\n"))
        .singleElement()
        .asString()
        .startsWith(
            "pubsub-worker.subscriptions.orders.ttl: ttl (30s) must be at least the lease (1m)"
                + " with guard = lock");
    // Set in the defaults, reported once, there.
    assertThat(problems("pubsub-worker.subscription-defaults { lease = 60s, ttl = 30s }\n"))
        .singleElement()
        .asString()
        .startsWith("pubsub-worker.subscription-defaults.ttl: ttl (30s) must be at least");
    // A subscription's own lease against the defaults' ttl: reported on the subscription.
    assertThat(problems("pubsub-worker.subscriptions.orders.lease = 48h\n"))
        .singleElement()
        .asString()
        .startsWith("pubsub-worker.subscriptions.orders.lease: ttl (24h) must be at least");
    assertThat(
            problems(
                "pubsub-worker.subscriptions.orders { guard = mutex, lease = 60s, ttl = 30s }\n"))
        .isEmpty();
    assertThat(problems("pubsub-worker.subscriptions.orders { lease = 60s, ttl = 60s }\n"))
        .isEmpty();
  }

  @Test
  void a_redis_lease_that_one_slow_extension_could_outlast_is_refused() throws IOException {
    String redis = "pubsub-worker.lock-store.type = redis\n";
    assertThat(problems(redis + "pubsub-worker.subscriptions.orders.lease = 3s\n"))
        .singleElement()
        .asString()
        .startsWith(
            "pubsub-worker.subscriptions.orders.lease: lease 3s is too short for the heartbeat: an"
                + " extension sent every lease/3 may take up to"
                + " lock-store.redis.command-timeout (5s)")
        .contains("use a lease above 7500ms");
    assertThat(problems(redis + "pubsub-worker.subscriptions.orders.lease = 8s\n")).isEmpty();
    assertThat(
            problems(
                redis
                    + "pubsub-worker.lock-store.redis.command-timeout = 500ms\n"
                    + "pubsub-worker.subscriptions.orders.lease = 1s\n"))
        .isEmpty();
    // Without the heartbeat nothing extends the lease, so nothing has to fit into it.
    assertThat(
            problems(
                redis + "pubsub-worker.subscriptions.orders { lease = 3s, heartbeat = false }\n"))
        .isEmpty();
  }

  @Test
  void readiness_staleness_must_exceed_the_probe_interval() throws IOException {
    assertThat(
            problems(
                "pubsub-worker.observability { lock-store-probe-interval = 30s,"
                    + " lock-store-stale-after = 30s }\n"))
        .singleElement()
        .asString()
        .startsWith(
            "pubsub-worker.observability.lock-store-stale-after: must be longer than"
                + " lock-store-probe-interval (30s)");
  }

  @ParameterizedTest(name = "{0} = {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "subscriptions.orders.parallel-pull-count | 100000 | must be in 1..64, but was 100000",
        "subscriptions.orders.parallel-pull-count | 0 | must be in 1..64, but was 0",
        "subscriptions.orders.executor-threads | 5000 | must be in 1..1000, but was 5000",
        "subscriptions.orders.flow-control.max-outstanding-messages | 99999999 | must be in"
            + " 1..1000000, but was 99999999",
        "observability.http-port | 99999 | must be in 0..65535, but was 99999",
        "observability.http-port | -1 | must be in 0..65535, but was -1",
        "lock-store.sql.maximum-pool-size | 0 | must be in 1..1000, but was 0",
        "subscriptions.orders.executor-threads | 99999999999999 | must be in 1..1000, but was"
            + " 99999999999999",
        "pubsub-emulator-host | \"127.0.0.1:99999\" | must have a port in 1..65535, but was"
            + " '127.0.0.1:99999'",
        "pubsub-emulator-host | localhost | must be host:port, such as 127.0.0.1:8085, but was"
            + " 'localhost'",
        "pubsub-emulator-host | \"http://localhost:8085\" | must be host:port",
        "lock-store.datastore.emulator-host | \"127.0.0.1:0\" | must have a port in 1..65535",
      })
  void values_out_of_range_or_ill_formed_are_one_line_each(
      String path, String value, String problem) throws IOException {
    assertThat(problems("pubsub-worker." + path + " = " + value + "\n"))
        .singleElement()
        .asString()
        .startsWith("pubsub-worker." + path + ": " + problem);
  }

  @Test
  void subscription_names_and_project_ids_follow_pub_sub_s_rules() throws IOException {
    assertThat(problems("pubsub-worker.subscriptions.orders.name = \"orders sub\"\n"))
        .singleElement()
        .asString()
        .startsWith("pubsub-worker.subscriptions.orders.name: must be a subscription id");
    assertThat(problems("pubsub-worker.subscriptions.orders.name = \"1orders\"\n")).hasSize(1);
    assertThat(problems("pubsub-worker.subscriptions.orders.name = \"" + "s".repeat(256) + "\"\n"))
        .hasSize(1);
    assertThat(
            problems(
                "pubsub-worker.subscriptions.orders.name ="
                    + " \"projects/other-project/subscriptions/orders-sub.v2\"\n"))
        .isEmpty();
    assertThat(problems("pubsub-worker.project-id = \"my project\"\n"))
        .singleElement()
        .asString()
        .startsWith("pubsub-worker.project-id: must be a Google Cloud project id");
    assertThat(problems("pubsub-worker.project-id = \"example.com:shop-1\"\n")).isEmpty();
  }

  @Test
  void host_port_forms_that_are_valid_pass() throws IOException {
    assertThat(problems("pubsub-worker.pubsub-emulator-host = \"localhost:8085\"\n")).isEmpty();
    assertThat(problems("pubsub-worker.pubsub-emulator-host = \"[::1]:8085\"\n")).isEmpty();
    assertThat(problems("pubsub-worker.lock-store.datastore.emulator-host = \"ds_1:8081\"\n"))
        .isEmpty();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "jdbc:postgresql://db:99999/x | has a port outside 1..65535",
        "postgres://db/x | must be a jdbc:postgresql:, jdbc:mysql:, jdbc:mariadb: or jdbc:h2: URL",
        "jdbc:oracle:thin:@db:1521:x | must be a jdbc:postgresql:",
        "jdbc:mariadb:db/x | must be jdbc:DB://host[:port]/database",
        "jdbc:postgresql:// | must be jdbc:DB://host[:port]/database",
        "jdbc:postgresql://db host/x | has an invalid host 'db host'",
        "jdbc:mysql://db:3306/x | no JDBC driver on the class path accepts",
      })
  void an_ill_formed_jdbc_url_is_refused_without_connecting(String url, String problem)
      throws IOException {
    assertThat(
            problems("pubsub-worker.lock-store { type = sql, sql.jdbc-url = \"" + url + "\" }\n"))
        .singleElement()
        .asString()
        .startsWith("pubsub-worker.lock-store.sql.jdbc-url: " + problem);
  }

  @Test
  void well_formed_jdbc_urls_pass_and_the_password_is_never_echoed() throws IOException {
    for (String url :
        List.of(
            "jdbc:postgresql://127.0.0.1:5432/test?user=root",
            "jdbc:postgresql://a:5432,b:5433/test",
            "jdbc:mariadb://127.0.0.1/test",
            "jdbc:mariadb://db_host:3306/test",
            "jdbc:h2:mem:x;DB_CLOSE_DELAY=-1")) {
      assertThat(
              problems("pubsub-worker.lock-store { type = sql, sql.jdbc-url = \"" + url + "\" }\n"))
          .as(url)
          .isEmpty();
    }
    assertThat(
            problems(
                "pubsub-worker.lock-store { type = sql, sql.jdbc-url ="
                    + " \"jdbc:postgresql://db:0/x?password=hunter2\" }\n"))
        .singleElement()
        .asString()
        .doesNotContain("hunter2");
  }

  @Test
  void a_misspelled_root_is_reported_alone_with_a_hint() throws IOException {
    Path file = dir.resolve("typo.conf");
    Files.writeString(
        file,
        """
        pubsub-workr {
          project-id = p
          subscriptions { orders { handler = orders } }
        }
        """);
    List<String> problems = new ArrayList<>();
    try {
      WorkerConfig.loadFile(file, getClass().getClassLoader());
    } catch (InvalidConfigException e) {
      e.problems().forEach(p -> problems.add(p.toString().replace(dir + "/", "")));
    }
    assertThat(problems)
        .containsExactly(
            "pubsub-workr: unknown setting; did you mean 'pubsub-worker'? (typo.conf:1)");
  }

  @Test
  void a_misspelled_root_is_reported_the_same_when_the_file_comes_from_config_file()
      throws IOException {
    Path file = dir.resolve("typo.conf");
    Files.writeString(
        file,
        """
        pubsub-workr {
          project-id = p
          subscriptions { orders { handler = orders } }
        }
        """);
    assertThat(withSystemProperty("config.file", file.toString(), this::defaultProblems))
        .containsExactly(
            "pubsub-workr: unknown setting; did you mean 'pubsub-worker'? (typo.conf:1)");
  }

  @Test
  void a_misspelled_root_is_reported_the_same_in_an_application_config_resource() {
    assertThat(
            withSystemProperty(
                "config.resource", "config-strictness/typo-root.conf", this::defaultProblems))
        .singleElement()
        .asString()
        .startsWith("pubsub-workr: unknown setting; did you mean 'pubsub-worker'? (")
        .contains("typo-root.conf");
  }

  /** The problems {@link WorkerConfig#loadDefault} reports (none if it loads). */
  private List<String> defaultProblems() {
    try {
      WorkerConfig.loadDefault(getClass().getClassLoader());
    } catch (InvalidConfigException e) {
      return e.problems().stream().map(p -> p.toString().replace(dir + "/", "")).toList();
    }
    return List.of();
  }

  private static <T> T withSystemProperty(String name, String value, Supplier<T> body) {
    String previous = System.getProperty(name);
    System.setProperty(name, value);
    try {
      return body.get();
    } finally {
      if (previous == null) {
        System.clearProperty(name);
      } else {
        System.setProperty(name, previous);
      }
      ConfigFactory.invalidateCaches();
    }
  }

  @Test
  void any_other_root_key_is_refused() throws IOException {
    assertThat(problems("akka { loglevel = DEBUG }\n"))
        .containsExactly(
            "akka: unknown setting: the worker reads only pubsub-worker { ... } (worker.conf:3)");
  }

  @Test
  void a_folder_is_not_a_config_file() throws IOException {
    Path folder = Files.createDirectories(dir.resolve("conf.d"));
    try {
      WorkerConfig.loadFile(folder, getClass().getClassLoader());
      throw new AssertionError("a folder loaded");
    } catch (InvalidConfigException e) {
      assertThat(e.problems())
          .extracting(ConfigProblem::toString)
          .containsExactly("config file: " + folder + " is a folder, not a config file");
    }
  }

  @Test
  void an_unreadable_file_is_its_own_problem() {
    // A file every user, root included, fails to read: the kernel refuses the read itself.
    Path file = Path.of("/proc/self/mem");
    try {
      WorkerConfig.loadFile(file, getClass().getClassLoader());
      throw new AssertionError("an unreadable file loaded");
    } catch (InvalidConfigException e) {
      // The reason is the C library's text for EIO ("Input/output error" with glibc).
      assertThat(e.problems())
          .singleElement()
          .asString()
          .startsWith("config file: " + file + " cannot be read (")
          .endsWith(")");
    }
  }

  @Test
  void a_fifo_or_a_path_under_a_file_is_refused_without_blocking_or_guessing() throws Exception {
    Path fifo = dir.resolve("worker.fifo");
    Process mkfifo = new ProcessBuilder("mkfifo", fifo.toString()).inheritIO().start();
    assertThat(mkfifo.waitFor()).isZero();
    Path file = dir.resolve("plain.conf");
    Files.writeString(file, "pubsub-worker.project-id = p\n" + SUBSCRIPTION);
    Path underFile = file.resolve("worker.conf");
    assertThat(loadProblems(fifo))
        .as("no reader ever opens the pipe, so nothing blocks")
        .containsExactly("config file: " + fifo + " is not a regular file");
    assertThat(loadProblems(underFile)).containsExactly("config file: no such file: " + underFile);
  }

  private List<String> loadProblems(Path file) {
    try {
      WorkerConfig.loadFile(file, getClass().getClassLoader());
    } catch (InvalidConfigException e) {
      return e.problems().stream().map(ConfigProblem::toString).toList();
    }
    throw new AssertionError("loaded " + file);
  }
}
