package dev.pubsubworker.runtime.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Secrets are masked in every URL form, and what is not secret stays readable. */
class SecretsTest {

  /** A URL, the secrets it holds, and what its masked form must be. */
  static Stream<Arguments> urls() {
    return Stream.of(
        row("jdbc:mariadb://app:s3cret@db:3306/orders", "jdbc:mariadb://app:***@db:3306/orders"),
        row(
            "jdbc:mariadb://app:s3cret@db/orders?password=0ther&useSsl=true",
            "jdbc:mariadb://app:***@db/orders?password=***&useSsl=true",
            "s3cret",
            "0ther"),
        row(
            "jdbc:postgresql://db:5432/orders?user=app&password=s3cret&ssl=true",
            "jdbc:postgresql://db:5432/orders?user=app&password=***&ssl=true"),
        row(
            "jdbc:postgresql://db/orders?PASSWORD=s3cret",
            "jdbc:postgresql://db/orders?PASSWORD=***"),
        row(
            "jdbc:postgresql://db/orders?sslmode=verify-full&sslpassword=k3ypass",
            "jdbc:postgresql://db/orders?sslmode=verify-full&sslpassword=***",
            "k3ypass"),
        row(
            "jdbc:mysql://db/orders?user=app&pwd=s3cret&trustStorePassword=tru5t",
            "jdbc:mysql://db/orders?user=app&pwd=***&trustStorePassword=***",
            "s3cret",
            "tru5t"),
        row(
            "jdbc:sqlserver://db:1433;databaseName=orders;user=sa;password=s3cret;encrypt=true",
            "jdbc:sqlserver://db:1433;databaseName=orders;user=sa;password=***;encrypt=true"),
        row(
            "jdbc:h2:tcp://db/~/orders;USER=sa;PASSWORD=s3cret",
            "jdbc:h2:tcp://db/~/orders;USER=sa;PASSWORD=***"),
        row("jdbc:h2:mem:x;Password=s3cret", "jdbc:h2:mem:x;Password=***"),
        // Passwords holding the URL's own delimiters.
        row("jdbc:mariadb://app:p@ss@db/orders", "jdbc:mariadb://app:***@db/orders", "p@ss"),
        row(
            "jdbc:mariadb://app:a@b:c/d?e#f%g;h@db:3306/orders?useSsl=true",
            "jdbc:mariadb://app:***@db:3306/orders?useSsl=true", "a@b:c/d?e#f%g;h"),
        row(
            "jdbc:mariadb://app:p@zz@db/orders?password=q@zz",
            "jdbc:mariadb://app:***@db/orders?password=***",
            "p@zz",
            "zz"),
        row(
            "jdbc:postgresql://db/orders?password=a@b:c/d?e#f%g;h&ssl=true",
            "jdbc:postgresql://db/orders?password=***&ssl=true", "a@b:c/d?e#f%g;h"),
        row(
            "jdbc:postgresql://db/orders?user=ops@example.com&password=s3cret",
            "jdbc:postgresql://db/orders?user=ops@example.com&password=***"),
        row(
            "jdbc:mysql://address=(host=db)(port=3306)(user=app)(password=s3cret)/orders",
            "jdbc:mysql://address=(host=db)(port=3306)(user=app)(password=***)/orders"),
        row(
            "jdbc:oracle:thin:app/s3cret@db:1521/orders",
            "jdbc:oracle:thin:app/***@db:1521/orders"),
        // A password holding what also starts parameters: ?x=, &x=, ;x= (once shown in full).
        row("jdbc:mariadb://app:a&x=1@db/orders", "jdbc:mariadb://app:***@db/orders", "a&x=1"),
        row("jdbc:mariadb://app:a;x=1@db/orders", "jdbc:mariadb://app:***@db/orders", "a;x=1"),
        row(
            "jdbc:postgresql://app:a?x=1@db/orders",
            "jdbc:postgresql://app:***@db/orders",
            "a?x=1"),
        row(
            "jdbc:postgresql://app:q?password=w@db/orders?ssl=true",
            "jdbc:postgresql://app:***@db/orders?ssl=true",
            "q?password=w"),
        row(
            "jdbc:postgresql://app:x@y.com/z@db:5432/orders",
            "jdbc:postgresql://app:***@db:5432/orders",
            "x@y.com/z"),
        row(
            "jdbc:postgresql://app:p#w@db1:5432,db2:5433/orders",
            "jdbc:postgresql://app:***@db1:5432,db2:5433/orders",
            "p#w"),
        // Redis.
        row("redis://:s3cret@cache:6379", "redis://:***@cache:6379"),
        row("rediss://app:s3cret@cache:6380/2", "rediss://app:***@cache:6380/2"),
        row("redis://s3cret@cache", "redis://***@cache"),
        row("rediss://app:p@ss:w/rd@cache:6380", "rediss://app:***@cache:6380", "p@ss:w/rd"),
        row(
            "redis://cache:6379?token=s3cret&timeout=5s",
            "redis://cache:6379?token=***&timeout=5s"),
        // Nothing secret: unchanged.
        row(
            "jdbc:postgresql://db:5432/orders?ssl=true",
            "jdbc:postgresql://db:5432/orders?ssl=true"),
        row("redis://cache:6379/0", "redis://cache:6379/0"),
        row(
            "jdbc:h2:mem:pubsub-worker;DB_CLOSE_DELAY=-1",
            "jdbc:h2:mem:pubsub-worker;DB_CLOSE_DELAY=-1"),
        row(
            "jdbc:postgresql://db:5432/orders?user=ops@example.com&ssl=true",
            "jdbc:postgresql://db:5432/orders?user=ops@example.com&ssl=true"),
        row("jdbc:h2:tcp://db/~/a@b", "jdbc:h2:tcp://db/~/a@b"));
  }

  private static Arguments row(String url, String masked, String... secrets) {
    List<String> s = secrets.length == 0 ? List.of("s3cret") : List.of(secrets);
    return Arguments.of(url, masked, s);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("urls")
  void the_secrets_found_are_the_ones_the_url_holds(
      String url, String masked, List<String> secrets) {
    if (url.equals(masked)) {
      assertThat(Secrets.secretsIn(url)).isEmpty();
    } else {
      List<String> found = Secrets.secretsIn(url);
      for (String secret : secrets) {
        assertThat(found).as(url).anyMatch(f -> f.contains(secret));
      }
    }
  }

  @Test
  void only_names_that_hold_a_secret_give_values_to_mask_everywhere() {
    assertThat(
            List.of(
                "password",
                "PASSWORD",
                "sslpassword",
                "trustStorePassword",
                "pwd",
                "pass",
                "token",
                "access_token",
                "client_secret",
                "client-secret",
                "api-key",
                "apiKey",
                "credentials",
                "private-key",
                "db.pwd"))
        .allMatch(Secrets::isSecretName);
    assertThat(
            List.of(
                "passwordCharacterEncoding",
                "sslpasswordcallback",
                "bypass",
                "user",
                "key",
                "key-prefix",
                "max-tokens",
                "token-ttl",
                "hash-tag"))
        .noneMatch(Secrets::isSecretName);
    assertThat(Secrets.secretsIn("jdbc:mariadb://db/x?passwordCharacterEncoding=UTF-8")).isEmpty();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("urls")
  void the_secret_never_appears_and_the_rest_stays_readable(
      String url, String masked, List<String> secrets) {
    String shown = Secrets.maskUri(url);
    assertThat(shown).isEqualTo(masked);
    if (!url.equals(masked)) {
      for (String secret : secrets) {
        assertThat(shown).doesNotContain(secret);
      }
    }
  }
}
