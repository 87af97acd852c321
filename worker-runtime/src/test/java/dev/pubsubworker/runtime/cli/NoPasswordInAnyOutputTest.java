package dev.pubsubworker.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import dev.pubsubworker.runtime.observability.CapturedLog;
import dev.pubsubworker.runtime.testing.CliProcess;
import dev.pubsubworker.runtime.testing.TestPubSub;
import dev.pubsubworker.testservices.PubSubEmulator;
import dev.pubsubworker.testservices.SqlDatabase;
import dev.pubsubworker.testservices.SubscriptionFixture;
import dev.pubsubworker.testservices.SubscriptionSpec;
import dev.pubsubworker.testservices.TestServices;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.slf4j.LoggerFactory;

/**
 * No password appears in anything the worker prints, for every way a store's password can be
 * configured: each form below goes through {@code check-config}, {@code inspect}, {@code forget},
 * {@code purge} and {@code run} (in this JVM, against stores that are down, unknown hosts, wrong
 * passwords, missing databases, and the forms the drivers cannot read), and everything is searched
 * — each command's stdout and stderr, every log line the process wrote in the text and in the JSON
 * format (the libraries' lines too: HikariCP, pgjdbc, MariaDB Connector/J, H2 and Lettuce at
 * DEBUG), and all that reached the JVM's own stdout and stderr. Worker processes then take the full
 * path: {@code run} with the JSON format and the store in an environment variable, its readiness
 * probe failing and {@code /readyz} answering, {@code run --verbose} and {@code inspect --verbose}
 * with stack traces, {@code check-config} with environment overrides.
 *
 * <p>Each password is built from random tokens joined by the characters a form is about ({@code @ :
 * / ? # & ; = % +}, quotes, backslashes), and the search is for each token, so that a password cut
 * in two at a delimiter — the way the drivers quoted them — is found as well as a whole one.
 */
class NoPasswordInAnyOutputTest {

  private static final Duration BOUND = Duration.ofSeconds(60);

  /** What stops a store call quickly: the lock store's shortest connect timeout. */
  private static final String SQL = "type = sql, sql { connect-timeout = 250ms, ";

  /** Loggers raised to DEBUG while the forms run: everything that touches a store's secrets. */
  private static final List<String> LIBRARY_LOGGERS =
      List.of("com.zaxxer.hikari", "org.postgresql", "org.mariadb", "org.h2", "io.lettuce");

  /** Every token of every password used so far, and the form it belongs to. */
  private static final Map<String, String> MARKERS = new ConcurrentHashMap<>();

  @TempDir static Path dir;

  private static CapturedLog text;
  private static CapturedLog json;
  private static final Map<String, Level> oldLevels = new HashMap<>();
  private static PrintStream oldOut;
  private static PrintStream oldErr;
  private static final ByteArrayOutputStream console = new ByteArrayOutputStream();

  /** A form of configuring a password, and whether check-config must refuse it. */
  record Form(
      String name, String password, List<String> tokens, String lockStore, boolean refused) {
    @Override
    public String toString() {
      return name;
    }
  }

  @BeforeAll
  static void captureEverything() {
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    for (String name : LIBRARY_LOGGERS) {
      oldLevels.put(name, context.getLogger(name).getLevel());
      context.getLogger(name).setLevel(Level.DEBUG);
    }
    text = CapturedLog.attach("text");
    json = CapturedLog.attach("json");
    oldOut = System.out;
    oldErr = System.err;
    System.setOut(new PrintStream(new Tee(oldOut), true, StandardCharsets.UTF_8));
    System.setErr(new PrintStream(new Tee(oldErr), true, StandardCharsets.UTF_8));
  }

  @AfterAll
  static void restoreAndSearchWhatCameLate() {
    System.setOut(oldOut);
    System.setErr(oldErr);
    json.close();
    text.close();
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    oldLevels.forEach((name, level) -> context.getLogger(name).setLevel(level));
    // A probe thread may have logged after its form was searched: search it all once more.
    Map<String, String> all = new LinkedHashMap<>();
    all.put("log (text)", String.join("", text.events));
    all.put("log (json)", String.join("", json.events));
    all.put("stdout and stderr of this JVM", consoleText());
    assertNoMarker(all, MARKERS.keySet());
  }

  /** An output stream that also keeps what goes through it. */
  private static final class Tee extends OutputStream {
    private final OutputStream target;

    Tee(OutputStream target) {
      this.target = target;
    }

    @Override
    public void write(int b) throws IOException {
      synchronized (console) {
        console.write(b);
      }
      target.write(b);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      synchronized (console) {
        console.write(b, off, len);
      }
      target.write(b, off, len);
    }

    @Override
    public void flush() throws IOException {
      target.flush();
    }
  }

  private static String consoleText() {
    synchronized (console) {
      return console.toString(StandardCharsets.UTF_8);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // The forms.

  private static final String ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789";

  private static String token() {
    StringBuilder t = new StringBuilder("Q");
    for (int i = 0; i < 9; i++) {
      t.append(ALPHABET.charAt(ThreadLocalRandom.current().nextInt(ALPHABET.length())));
    }
    return t.toString();
  }

  /**
   * A form whose password is random tokens with one of {@code separators} between each two, and
   * whose lock-store block {@code lockStore} makes from the password.
   */
  private static Form form(
      String name, boolean refused, String separators, UnaryOperator<String> lockStore) {
    List<String> tokens = new ArrayList<>();
    StringBuilder password = new StringBuilder();
    for (int i = 0; i <= separators.length(); i++) {
      String t = token();
      tokens.add(t);
      password.append(t);
      if (i < separators.length()) {
        password.append(separators.charAt(i));
      }
    }
    String pw = password.toString();
    return new Form(name, pw, List.copyOf(tokens), lockStore.apply(pw), refused);
  }

  /** Percent-encoded, as a URL must carry reserved characters. */
  private static String enc(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  /** A HOCON quoted string's content. */
  private static String q(String s) {
    return s.replace("\\", "\\\\").replace("\"", "\\\"");
  }

  private static String sql(String jdbcUrl, String more) {
    return SQL + "jdbc-url = \"" + q(jdbcUrl) + "\"" + more + " }";
  }

  private static String redis(String uri) {
    return "type = redis, redis.uri = \"" + q(uri) + "\"";
  }

  private static String hostPort(String url) {
    return url.replaceFirst("^[a-z:]+//(?:[^@/]*@)?([^/?]+).*$", "$1");
  }

  static List<Form> forms() {
    SqlDatabase pg = TestServices.postgres();
    SqlDatabase maria = TestServices.mariadb();
    String pgAt = hostPort(pg.jdbcUrl());
    String mariaAt = hostPort(maria.jdbcUrl());
    String redisAt = TestServices.redis().host() + ":" + TestServices.redis().port();
    String pgUser = pg.user();
    String mariaUser = maria.user();
    String table = ", table = \"" + TestServices.uniqueName("secrets").replace('-', '_') + "\"";
    List<Form> forms = new ArrayList<>();

    // PostgreSQL: forms pgjdbc cannot read (refused), then forms it reads.
    String pgUserInfo = "jdbc:postgresql://" + pgUser + ":%s@" + pgAt + "/test";
    // A password holding each delimiter that ends a part of a URL.
    for (String separators : List.of("-", "@", "&=", ";=", "?=", "/", "#", "::")) {
      forms.add(
          form(
              "pg userinfo with " + separators,
              true,
              separators,
              p -> sql(pgUserInfo.formatted(p), "")));
    }
    forms.add(
        form(
            "pg userinfo percent-encoded",
            true,
            "@:/?#",
            p -> sql(pgUserInfo.formatted(enc(p)), "")));
    forms.add(
        form(
            "pg ;password= after the database",
            true,
            "-",
            p ->
                sql(
                    "jdbc:postgresql://" + pgAt + "/test;password=" + p,
                    ", user = \"" + pgUser + "\"")));
    String pgDown = "jdbc:postgresql://127.0.0.1:9/test?user=root&password=";
    forms.add(form("pg raw + in ?password=", true, "+", p -> sql(pgDown + p, "")));
    forms.add(
        form(
            "pg ?password= not valid percent-encoding",
            true,
            "%",
            p -> sql(pgDown + p + "%zz", "")));
    forms.add(form("pg ?password=, store down", false, "-", p -> sql(pgDown + p, "")));
    forms.add(
        form(
            "pg ?password= percent-encoded @:/?#&;=%+, store down",
            false, "@:/?#&;=%+", p -> sql(pgDown + enc(p), "")));
    forms.add(
        form(
            "pg ?PASSWORD= and ?sslpassword=, store down",
            false,
            "_",
            p ->
                sql("jdbc:postgresql://127.0.0.1:9/test?PASSWORD=" + p + "&sslpassword=" + p, "")));
    forms.add(
        form(
            "pg password setting with @:/?#&;=%, store down",
            false,
            "@:/?#&;=%",
            p ->
                sql(
                    "jdbc:postgresql://127.0.0.1:9/test",
                    ", user = root, password = \"" + q(p) + "\"")));
    forms.add(
        form(
            "pg password setting with quotes and backslashes, store down",
            false,
            "\"\\'$",
            p ->
                sql(
                    "jdbc:postgresql://127.0.0.1:9/test",
                    ", user = root, password = \"" + q(p) + "\"")));
    forms.add(
        form(
            "pg missing database on the server",
            false,
            "-",
            p ->
                sql(
                    "jdbc:postgresql://" + pgAt + "/no_such_db_9?user=" + pgUser + "&password=" + p,
                    "")));
    forms.add(
        form(
            "pg unknown host",
            false,
            "-",
            p -> sql("jdbc:postgresql://no-such-host.invalid/test?password=" + p, "")));
    forms.add(
        form(
            "pg reachable, lock table missing",
            false,
            "-",
            p ->
                sql(
                    "jdbc:postgresql://" + pgAt + "/test?user=" + pgUser + "&password=" + p,
                    table + ", create-table = false")));
    String digits = "7" + (10_000_000_000L + ThreadLocalRandom.current().nextLong(89_999_999_999L));
    forms.add(
        new Form(
            "pg numeric password setting, store down",
            digits,
            List.of(digits),
            sql("jdbc:postgresql://127.0.0.1:9/test", ", user = root, password = " + digits),
            false));

    // MariaDB (and jdbc:mysql:, which no bundled driver reads without permitMysqlScheme).
    String mariaUserInfo = "jdbc:mariadb://" + mariaUser + ":%s@" + mariaAt + "/test";
    forms.add(form("mariadb userinfo", true, "-", p -> sql(mariaUserInfo.formatted(p), "")));
    forms.add(
        form(
            "mariadb userinfo with @ and :", true, "@:", p -> sql(mariaUserInfo.formatted(p), "")));
    forms.add(
        form("mariadb userinfo with &x=", true, "&=", p -> sql(mariaUserInfo.formatted(p), "")));
    forms.add(
        form(
            "mariadb address=(user)(password)",
            true,
            "-",
            p ->
                sql(
                    "jdbc:mariadb://address=(host=127.0.0.1)(port=3306)(user="
                        + mariaUser
                        + ")(password="
                        + p
                        + ")/test",
                    "")));
    forms.add(
        form(
            "mariadb ;password= after the database",
            true,
            "-",
            p ->
                sql(
                    "jdbc:mariadb://" + mariaAt + "/test;password=" + p,
                    ", user = \"" + mariaUser + "\"")));
    forms.add(
        form(
            "mysql userinfo, no driver",
            true,
            ":",
            p -> sql("jdbc:mysql://root:" + p + "@" + mariaAt + "/test", "")));
    forms.add(
        form(
            "mysql address=(password), no driver",
            true,
            "-",
            p ->
                sql(
                    "jdbc:mysql://address=(host=127.0.0.1)(port=3306)(user=root)(password="
                        + p
                        + ")/test",
                    "")));
    forms.add(
        form(
            "mariadb ?password=, wrong password",
            false,
            "-",
            p ->
                sql(
                    "jdbc:mariadb://" + mariaAt + "/test?user=" + mariaUser + "&password=" + p,
                    "")));
    forms.add(
        form(
            "mariadb ?password= with @:/?#;=%, wrong password",
            false,
            "@:/?#;=%",
            p ->
                sql(
                    "jdbc:mariadb://" + mariaAt + "/test?user=" + mariaUser + "&password=" + p,
                    "")));
    forms.add(
        form(
            "mariadb password setting, wrong password",
            false,
            "@&",
            p ->
                sql(
                    "jdbc:mariadb://" + mariaAt + "/test",
                    ", user = \"" + mariaUser + "\", password = \"" + q(p) + "\"")));
    forms.add(
        form(
            "mariadb password setting, store down",
            false,
            "-",
            p ->
                sql(
                    "jdbc:mariadb://127.0.0.1:9/test",
                    ", user = root, password = \"" + q(p) + "\"")));
    forms.add(
        form(
            "mariadb unknown host",
            false,
            "-",
            p -> sql("jdbc:mariadb://no-such-host.invalid/test?user=root&password=" + p, "")));

    // H2.
    forms.add(
        form(
            "h2 ;PASSWORD= in memory, works",
            false,
            "@:/?#&",
            p ->
                sql(
                    "jdbc:h2:mem:" + TestServices.uniqueName("secrets") + ";USER=sa;PASSWORD=" + p,
                    table)));
    forms.add(
        form(
            "h2 password setting in memory, works",
            false,
            ";=",
            p ->
                sql(
                    "jdbc:h2:mem:" + TestServices.uniqueName("secrets"),
                    table + ", user = sa, password = \"" + q(p) + "\"")));
    forms.add(
        form(
            "h2 tcp userinfo",
            true,
            "-",
            p -> sql("jdbc:h2:tcp://sa:" + p + "@127.0.0.1:9/~/x", "")));
    forms.add(form("h2 ?password=", true, "-", p -> sql("jdbc:h2:mem:x?password=" + p, "")));
    forms.add(
        form(
            "h2 tcp server down, ;PASSWORD=",
            false,
            "-",
            p -> sql("jdbc:h2:tcp://127.0.0.1:9/~/x;USER=sa;PASSWORD=" + p, "")));

    // Redis (Lettuce).
    forms.add(
        form("redis userinfo, down", false, "-", p -> redis("redis://:" + p + "@127.0.0.1:9")));
    forms.add(
        form(
            "redis user and password, real server",
            false,
            "-",
            p -> redis("redis://default:" + p + "@" + redisAt)));
    forms.add(
        form(
            "redis password percent-encoded @:/?#&;=%+, down",
            false, "@:/?#&;=%+", p -> redis("redis://u:" + enc(p) + "@127.0.0.1:9/0")));
    forms.add(
        form(
            "rediss (TLS) against a plain server",
            false,
            "-",
            p ->
                "type = redis, redis { connect-timeout = 1s, command-timeout = 1s,"
                    + " uri = \"rediss://default:"
                    + p
                    + "@"
                    + redisAt
                    + "\" }"));
    forms.add(
        form(
            "redis password as the whole userinfo, down",
            false,
            "-",
            p -> redis("redis://" + p + "@127.0.0.1:9")));
    forms.add(
        form(
            "redis unknown host",
            false,
            "-",
            p -> redis("redis://:" + p + "@no-such-host.invalid:6379")));
    forms.add(
        form(
            "redis-sentinel, down",
            false,
            "-",
            p -> redis("redis-sentinel://:" + p + "@127.0.0.1:9#mymaster")));
    forms.add(
        form(
            "redis raw # in the password",
            true,
            "#",
            p -> redis("redis://:" + p + "@127.0.0.1:9")));
    forms.add(
        form(
            "redis raw / in the password",
            true,
            "/",
            p -> redis("redis://:" + p + "@127.0.0.1:9")));
    forms.add(
        form(
            "redis raw ? in the password",
            true,
            "?",
            p -> redis("redis://u:" + p + "@127.0.0.1:9")));
    forms.add(
        form(
            "redis raw space in the password",
            true,
            " ",
            p -> redis("redis://u:" + p + "@127.0.0.1:9")));
    forms.add(form("redis ?password=", true, "-", p -> redis("redis://127.0.0.1:9?password=" + p)));
    return forms;
  }

  // ---------------------------------------------------------------------------------------------
  // In this JVM: every command, every form.

  @ParameterizedTest(name = "{0}")
  @MethodSource("forms")
  void no_command_prints_the_password(Form form) throws IOException {
    form.tokens().forEach(t -> MARKERS.put(t, form.name()));
    MARKERS.put(form.password(), form.name());
    int textFrom = text.events.size();
    int jsonFrom = json.events.size();
    int consoleFrom = consoleText().length();
    PubSubEmulator pubsub = TestPubSub.embedded();
    Path file = dir.resolve(TestServices.uniqueName("form") + ".conf");
    Files.writeString(
        file,
        """
        pubsub-worker {
          project-id = "%s"
          pubsub-emulator-host = "%s"
          logging.format = text
          observability.http-port = 0
          lock-store { %s }
          subscriptions { orders { name = "%s", handler = orders } }
        }
        """
            .formatted(
                pubsub.projectId(),
                pubsub.hostPort(),
                form.lockStore(),
                TestServices.uniqueName("missing")));
    String config = file.toString();
    Map<String, String> outputs = new LinkedHashMap<>();
    for (String[] args :
        List.of(
            new String[] {"check-config", "--config", config},
            new String[] {"inspect", "orders:k", "--json", "--verbose", "--config", config},
            new String[] {"forget", "orders:k", "--yes", "--config", config},
            new String[] {"purge", "--verbose", "--config", config},
            new String[] {"run", "--config", config})) {
      CliRun run = assertTimeoutPreemptively(BOUND, () -> CliRun.of(args));
      String command = String.join(" ", List.of(args).subList(0, args.length - 2));
      outputs.put(command + " (stdout)", run.out());
      outputs.put(command + " (stderr)", run.err());
      if (form.refused()) {
        assertThat(run.exitCode()).as(command + ": " + run.err()).isEqualTo(ExitCodes.BAD_CONFIG);
        assertThat(run.err())
            .as(command)
            .startsWith("error: 1 configuration problem")
            .containsPattern("lock-store\\.(sql\\.jdbc-url|redis\\.uri): ");
      } else if (args[0].equals("check-config")) {
        assertThat(run.exitCode()).as(command + ": " + run.err()).isEqualTo(ExitCodes.OK);
        assertThat(run.out()).contains("lock store:");
      } else if (args[0].equals("run")) {
        // The store or the (missing) subscription is unavailable.
        assertThat(run.exitCode()).as(command + ": " + run.err()).isNotEqualTo(ExitCodes.OK);
      }
    }
    // Snapshots first: a worker thread of the last run may still be logging, and a sub-list of a
    // CopyOnWriteArrayList fails on a write made after it was taken.
    List<String> textLog = List.copyOf(text.events);
    List<String> jsonLog = List.copyOf(json.events);
    outputs.put("log (text)", String.join("", textLog.subList(textFrom, textLog.size())));
    outputs.put("log (json)", String.join("", jsonLog.subList(jsonFrom, jsonLog.size())));
    outputs.put("stdout and stderr of this JVM", consoleText().substring(consoleFrom));
    assertNoMarker(outputs, MARKERS.keySet());
  }

  private static void assertNoMarker(Map<String, String> outputs, Set<String> markers) {
    List<String> leaks = new ArrayList<>();
    outputs.forEach(
        (where, output) -> {
          for (String marker : markers) {
            int at = output.indexOf(marker);
            if (at >= 0) {
              int from = output.lastIndexOf('\n', at) + 1;
              int to = output.indexOf('\n', at);
              leaks.add(
                  "'"
                      + MARKERS.get(marker)
                      + "' shows in "
                      + where
                      + ": "
                      + output.substring(from, to < 0 ? output.length() : to));
            }
          }
        });
    if (!leaks.isEmpty()) {
      fail(leaks.size() + " password(s) printed:\n" + String.join("\n", leaks));
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Worker processes: the full path, secrets from the environment.

  /** Worker processes with {@code environment}, whose config is refused or whose store fails. */
  private record EnvRun(
      Map<String, String> environment, boolean refused, List<String[]> commands) {}

  private static Form envForm(String separators) {
    Form f = form("environment", false, separators, p -> "");
    f.tokens().forEach(t -> MARKERS.put(t, "a worker process"));
    return f;
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private static String get(int port, String path) throws Exception {
    HttpResponse<String> r =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                    .timeout(Duration.ofSeconds(10))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    return r.statusCode() + " " + r.body();
  }

  @Test
  void a_running_worker_whose_store_is_down_logs_json_and_answers_readyz_without_the_password()
      throws Exception {
    Form redis = envForm("@:/?#&;=%");
    PubSubEmulator pubsub = TestPubSub.embedded();
    SubscriptionFixture fixture = pubsub.createSubscription(SubscriptionSpec.defaults());
    Path file = dir.resolve("running.conf");
    Files.writeString(
        file,
        """
        pubsub-worker {
          project-id = "%s"
          pubsub-emulator-host = "%s"
          shutdown-grace = 2s
          observability { http-host = "127.0.0.1", lock-store-probe-interval = 500ms }
          subscriptions { orders { name = "%s", handler = orders } }
        }
        """
            .formatted(
                pubsub.projectId(), pubsub.hostPort(), fixture.subscription().getSubscription()));
    int port = freePort();
    Path log = dir.resolve("running.log");
    ProcessBuilder builder = CliProcess.builder(log, "run", "--config", file.toString());
    builder.environment().put("PUBSUB_WORKER_LOG_FORMAT", "json");
    builder.environment().put("PUBSUB_WORKER_HTTP_PORT", Integer.toString(port));
    builder.environment().put("PUBSUB_WORKER_LOCK_STORE", "redis");
    builder
        .environment()
        .put(
            "PUBSUB_WORKER_REDIS_URI", "redis://default:" + enc(redis.password()) + "@127.0.0.1:9");
    Process worker = builder.start();
    Map<String, String> outputs = new LinkedHashMap<>();
    try {
      await().atMost(BOUND).until(() -> Files.readString(log).contains("worker started"));
      pubsub.publish(fixture.topic(), "{\"orderId\":\"po-1\"}");
      await()
          .atMost(BOUND)
          .until(() -> Files.readString(log).contains("lock store readiness probe failed"));
      outputs.put("/readyz", get(port, "/readyz"));
      outputs.put("/healthz", get(port, "/healthz"));
      assertThat(outputs.get("/readyz")).startsWith("503 ");
    } finally {
      worker.destroy();
      assertThat(worker.waitFor(BOUND.toSeconds(), TimeUnit.SECONDS)).isTrue();
    }
    String output = Files.readString(log);
    outputs.put("the worker's output", output);
    assertThat(output).contains("\"severity\":\"WARNING\"");
    assertNoMarker(outputs, Set.copyOf(redis.tokens()));
  }

  @Test
  void run_and_inspect_with_stack_traces_and_check_config_with_environment_overrides()
      throws Exception {
    Form url = envForm("@:/?#&;=%+");
    Form setting = envForm("@:/?#&;=%\"\\");
    Form userInfo = envForm(":@");
    Form maria = envForm("@:/?#;=");
    PubSubEmulator pubsub = TestPubSub.embedded();
    Path file = dir.resolve("env.conf");
    Files.writeString(
        file,
        """
        pubsub-worker {
          project-id = "%s"
          pubsub-emulator-host = "%s"
          lock-store.sql { connect-timeout = 250ms, user = root }
          subscriptions { orders { name = "%s", handler = orders } }
        }
        """
            .formatted(pubsub.projectId(), pubsub.hostPort(), TestServices.uniqueName("missing")));
    String mariaUrl = TestServices.mariadb().jdbcUrl().replaceFirst("\\?.*$", "");
    String conf = file.toString();
    String[] checkConfig = {"check-config", "--config", conf};
    String[] run = {"run", "--verbose", "--config", conf};
    String[] inspect = {"inspect", "orders:k", "--verbose", "--config", conf};
    List<EnvRun> runs =
        List.of(
            new EnvRun(
                Map.of(
                    "PUBSUB_WORKER_JDBC_URL",
                    "jdbc:postgresql://127.0.0.1:9/test?user=root&password=" + enc(url.password()),
                    "PUBSUB_WORKER_JDBC_PASSWORD",
                    setting.password()),
                false,
                List.of(checkConfig, run)),
            new EnvRun(
                Map.of(
                    "PUBSUB_WORKER_JDBC_URL",
                    "jdbc:mariadb://root:" + userInfo.password() + "@127.0.0.1:3306/test"),
                true,
                List.<String[]>of(checkConfig)),
            new EnvRun(
                Map.of(
                    "PUBSUB_WORKER_JDBC_URL",
                    mariaUrl
                        + "?user="
                        + TestServices.mariadb().user()
                        + "&password="
                        + maria.password(),
                    "PUBSUB_WORKER_LOG_FORMAT",
                    "json"),
                false,
                List.of(checkConfig, inspect)));
    Map<String, String> outputs = new LinkedHashMap<>();
    int n = 0;
    for (EnvRun r : runs) {
      for (String[] args : r.commands()) {
        Path log = dir.resolve("env-" + n++ + ".log");
        ProcessBuilder builder = CliProcess.builder(log, args);
        builder.environment().putAll(r.environment());
        builder.environment().put("PUBSUB_WORKER_LOCK_STORE", "sql");
        Process p = builder.start();
        assertThat(p.waitFor(BOUND.toSeconds(), TimeUnit.SECONDS)).as(args[0]).isTrue();
        String output = Files.readString(log);
        outputs.put(args[0] + " with " + r.environment().keySet(), output);
        int expected =
            r.refused()
                ? ExitCodes.BAD_CONFIG
                : args[0].equals("check-config") ? ExitCodes.OK : ExitCodes.UNAVAILABLE;
        assertThat(p.exitValue()).as(args[0] + ": " + output).isEqualTo(expected);
      }
    }
    Set<String> markers = new java.util.HashSet<>();
    for (Form f : List.of(url, setting, userInfo, maria)) {
      markers.addAll(f.tokens());
    }
    assertNoMarker(outputs, markers);
  }
}
