package dev.pubsubworker.runtime.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The JDBC URL forms the bundled drivers do not read as written are refused before anything
 * connects, with the form to use and without the password; the forms they do read pass. What each
 * driver reads was taken from its parser (pgjdbc {@code Driver.parseURL}, MariaDB Connector/J
 * {@code Configuration.parseInternal} and {@code HostAddress}, H2 {@code ConnectionInfo}) and
 * checked against the servers here: pgjdbc took {@code root:PW@127.0.0.1} for the host ({@code JDBC
 * URL invalid port number: PW@127.0.0.1}) and {@code test;password=PW} for the database; MariaDB
 * said {@code Incorrect port value : PW@127.0.0.1} and logged in without the {@code
 * (user=…)(password=…)} of an {@code address=}; H2 said {@code For input string: "PW@127.0.0.1:9"}
 * and took {@code ?password=PW} for part of the database name.
 */
class JdbcUrlFormsTest {

  private static final String PW = "Zq8secretW";

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "jdbc:postgresql://root:Zq8secretW@127.0.0.1:5432/test | has user:password@ before the"
            + " host, which PostgreSQL's driver does not read",
        "jdbc:postgresql://root:Zq8secretW@127.0.0.1/test | PostgreSQL's driver does not read",
        "jdbc:postgresql://root:a@Zq8secretW@db/test | PostgreSQL's driver does not read",
        "jdbc:postgresql://root:a&x=Zq8secretW@db/test | PostgreSQL's driver does not read",
        "jdbc:postgresql://root:a;x=Zq8secretW@db/test | PostgreSQL's driver does not read",
        "jdbc:postgresql://root:a?x=Zq8secretW@db/test | PostgreSQL's driver does not read",
        "jdbc:postgresql://root:a/Zq8secretW@db/test | PostgreSQL's driver does not read",
        "jdbc:postgresql://root:a#Zq8secretW@db/test | PostgreSQL's driver does not read",
        "jdbc:postgresql://root:Zq8secretW@db | PostgreSQL's driver does not read",
        "jdbc:postgresql://127.0.0.1/test;password=Zq8secretW | has ';' before its parameters:"
            + " PostgreSQL's driver reads no ;name=value settings",
        "jdbc:postgresql://db/test;user=root;password=Zq8secretW?ssl=true | PostgreSQL's driver"
            + " reads no ;name=value",
        "jdbc:postgresql://db/test?user=root&password=50%zzZq8secretW | has parameter 'password'"
            + " that is not valid percent-encoding",
        "jdbc:postgresql://db/test?password=a+Zq8secretW | has '+' in parameter 'password', which"
            + " PostgreSQL's driver decodes to a space",
        "jdbc:mariadb://root:Zq8secretW@127.0.0.1/test | has user:password@ before the host, which"
            + " MariaDB Connector/J does not read",
        "jdbc:mariadb://root:a@b:Zq8secretW@db:3306/test | MariaDB Connector/J does not read",
        "jdbc:mariadb://root:a&x=Zq8secretW@db/test | MariaDB Connector/J does not read",
        "jdbc:mariadb://root:Zq8secretW@db | MariaDB Connector/J does not read",
        "jdbc:mariadb://address=(host=127.0.0.1)(port=3306)(user=root)(password=Zq8secretW)/test |"
            + " has user or password inside address=(...), which MariaDB Connector/J ignores",
        "jdbc:mariadb://127.0.0.1/test;password=Zq8secretW | has ';' before its parameters:"
            + " MariaDB Connector/J reads no ;name=value settings",
        "jdbc:mysql://root:Zq8secretW@db/test?permitMysqlScheme | MariaDB Connector/J does not"
            + " read",
        "jdbc:h2:tcp://sa:Zq8secretW@127.0.0.1:9/~/x | has user:password@ before the host, which H2"
            + " does not read",
        "jdbc:h2:ssl://sa:Zq8secretW@db/~/x | which H2 does not read",
        "jdbc:h2:mem:x?password=Zq8secretW | has a ?name=value parameter, which H2 does not read",
        "jdbc:mysql://root:Zq8secretW@db/test | no JDBC driver on the class path accepts"
            + " 'jdbc:mysql://root:***@db/test'; for MySQL use jdbc:mariadb://",
        "jdbc:mysql://address=(host=db)(port=3306)(user=root)(password=Zq8secretW)/test | no JDBC"
            + " driver on the class path accepts 'jdbc:mysql://address=(host=db)(port=3306)"
            + "(user=root)(password=***)/test'",
        "jdbc:postgresql://root:a?b@Zq8secretW/test | PostgreSQL's driver does not read",
      })
  void a_form_the_driver_misreads_is_refused_without_the_password(String url, String problem) {
    Optional<String> p = JdbcUrlSyntax.problem(url);
    assertThat(p).as(url).isPresent();
    assertThat(p.get()).contains(problem.trim()).doesNotContain(PW).doesNotContain("secretW");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "jdbc:postgresql://127.0.0.1:5432/test?user=root&password=Zq8secretW",
        "jdbc:postgresql://db/test?user=root&password=a%40b%3Ac%2Fd%3Fe%23f%26g%3Bh%3Di%25j%2Bk",
        "jdbc:postgresql://db/test?password=a#b@c:d/e;f",
        "jdbc:postgresql://db/orders?user=ops@example.com&password=Zq8secretW",
        "jdbc:postgresql://a:5432,b:5433/test?sslpassword=Zq8secretW",
        "jdbc:postgresql://db/te%40st",
        "jdbc:mariadb://127.0.0.1/test?user=root&password=a@b:c/d?e#f;g=h%i+j",
        "jdbc:mariadb://address=(host=127.0.0.1)(port=3306)(type=primary)/test",
        "jdbc:mariadb://address=(host=a)(port=3306),address=(host=b)(port=3307)/test",
        "jdbc:h2:mem:x;USER=sa;PASSWORD=Zq8secretW",
        "jdbc:h2:tcp://127.0.0.1:9092/~/x;PASSWORD=Zq8secretW",
        "jdbc:h2:file:/tmp/a@b/x",
        // The Cloud SQL Java Connector: no host, the socket factory finds the instance.
        "jdbc:postgresql:///orders?cloudSqlInstance=p:europe-west1:db"
            + "&socketFactory=com.google.cloud.sql.postgres.SocketFactory",
        "jdbc:postgresql:///orders?socketFactory=com.google.cloud.sql.postgres.SocketFactory"
            + "&cloudSqlInstance=p:europe-west1:db&enableIamAuth=true",
      })
  void the_forms_the_drivers_read_pass(String url) {
    assertThat(JdbcUrlSyntax.problem(url)).as(url).isEmpty();
  }

  @Test
  void a_url_without_a_host_needs_a_socket_factory() {
    assertThat(JdbcUrlSyntax.problem("jdbc:postgresql:///orders"))
        .contains("must be jdbc:DB://host[:port]/database, but was 'jdbc:postgresql:///orders'");
    assertThat(JdbcUrlSyntax.problem("jdbc:postgresql:///orders?cloudSqlInstance=p:r:i"))
        .isPresent();
    assertThat(JdbcUrlSyntax.problem("jdbc:mariadb:///orders?socketFactory=x.Y")).isPresent();
  }

  @Test
  void a_bad_address_form_is_a_host_problem() {
    assertThat(JdbcUrlSyntax.problem("jdbc:mariadb://address=(port=3306)/test"))
        .get()
        .asString()
        .startsWith("has an invalid host");
    assertThat(JdbcUrlSyntax.problem("jdbc:mariadb://address=(host=db)(port=99999)/test"))
        .get()
        .asString()
        .startsWith("has a port outside 1..65535");
  }

  @Test
  void an_invalid_host_in_a_url_with_an_at_sign_is_not_quoted() {
    // pgjdbc would cut this at the '?': the 'host' is part of the password.
    Optional<String> p = JdbcUrlSyntax.problem("jdbc:mysql://root:Qv7x?ssZq8secretW@db/test");
    assertThat(p).get().asString().doesNotContain("Qv7").doesNotContain("Zq8");
  }

  @Test
  void the_refusal_names_the_setting_in_one_line_and_the_worker_never_starts() {
    List<ConfigProblem> problems = List.of();
    try {
      WorkerConfig.load(
          ConfigFactory.parseString(
                  """
                  pubsub-worker {
                    project-id = p
                    lock-store { type = sql, sql.jdbc-url = "jdbc:postgresql://root:%s@db/test" }
                    subscriptions { orders { handler = orders } }
                  }
                  """
                      .formatted(PW))
              .withFallback(ConfigFactory.defaultReference())
              .resolve());
    } catch (InvalidConfigException e) {
      problems = e.problems();
      assertThat(e.getMessage()).doesNotContain(PW);
    }
    assertThat(problems)
        .singleElement()
        .satisfies(
            p -> {
              assertThat(p.path()).isEqualTo("pubsub-worker.lock-store.sql.jdbc-url");
              assertThat(p.toString()).doesNotContain(PW).doesNotContain("\n");
            });
  }
}
