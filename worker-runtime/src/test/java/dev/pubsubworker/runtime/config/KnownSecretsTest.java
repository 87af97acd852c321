package dev.pubsubworker.runtime.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The registry of configured secrets: what a config puts in it, and that {@link KnownSecrets#mask}
 * hides every form of each value wherever it occurs while leaving the rest of a text alone.
 */
class KnownSecretsTest {

  /** A value no other test uses, so that what one test registers cannot hide another's text. */
  private static String unique(String prefix) {
    return prefix + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
  }

  @Test
  void a_registered_secret_is_masked_as_written_decoded_encoded_and_json_escaped() {
    String core = unique("Kx");
    String secret = core + "@a:b/c?d#e&f;g=h%i\"j\\k l+m";
    KnownSecrets.register(secret);

    assertThat(KnownSecrets.mask("UnknownHostException: user:" + secret + "@127.0.0.1"))
        .isEqualTo("UnknownHostException: user:***@127.0.0.1");
    String encoded = java.net.URLEncoder.encode(secret, java.nio.charset.StandardCharsets.UTF_8);
    assertThat(KnownSecrets.mask("url " + encoded + " end")).isEqualTo("url *** end");
    assertThat(KnownSecrets.mask("url " + encoded.replace("+", "%20") + " end"))
        .isEqualTo("url *** end");
    String json = secret.replace("\\", "\\\\").replace("\"", "\\\"");
    assertThat(KnownSecrets.mask("{\"message\":\"" + json + "\"}"))
        .isEqualTo("{\"message\":\"***\"}");
  }

  @Test
  void a_percent_encoded_secret_is_masked_also_as_the_driver_decodes_it() {
    String core = unique("Pe");
    KnownSecrets.register(core + "%40x%2By+z");

    assertThat(KnownSecrets.mask("pgjdbc read " + core + "@x+y z")).isEqualTo("pgjdbc read ***");
    assertThat(KnownSecrets.mask("as written " + core + "%40x%2By+z")).isEqualTo("as written ***");
    assertThat(KnownSecrets.mask("rfc 3986 " + core + "@x+y+z")).isEqualTo("rfc 3986 ***");
  }

  @Test
  void text_without_a_secret_is_unchanged_and_blank_values_are_ignored() {
    KnownSecrets.register("");
    KnownSecrets.register("   ");
    KnownSecrets.register(null);
    String text = "lock store sql jdbc:postgresql://db:5432/orders: connection refused  (x)";
    assertThat(KnownSecrets.mask(text)).isEqualTo(text);
    assertThat(KnownSecrets.mask(null)).isNull();
    assertThat(KnownSecrets.mask("")).isEmpty();
  }

  @Test
  void secret_parameters_are_masked_by_shape_even_when_their_value_was_never_configured() {
    assertThat(
            KnownSecrets.mask(
                "jdbcUrl.......jdbc:postgresql://db/x?password=<masked>#tail&ssl=true\n"
                    + "\tat org.example.Foo(Foo.java:1)"))
        .isEqualTo(
            "jdbcUrl.......jdbc:postgresql://db/x?password=***&ssl=true\n"
                + "\tat org.example.Foo(Foo.java:1)");
    assertThat(KnownSecrets.mask("jdbc:h2:mem:x;PASSWORD=abc;USER=sa"))
        .isEqualTo("jdbc:h2:mem:x;PASSWORD=***;USER=sa");
    assertThat(KnownSecrets.mask("address=(host=db)(password=abc)"))
        .isEqualTo("address=(host=db)(password=***)");
  }

  @Test
  void a_config_gives_its_secret_settings_the_secrets_in_its_urls_and_nothing_else() {
    String sqlPassword = unique("Sp");
    String urlPassword = unique("Up");
    String userInfo = unique("Ui");
    String apiKey = unique("Ak");
    String clientSecret = unique("Cs");
    String listToken = unique("Lt");
    String h2Password = unique("Hp");
    String otlp = unique("Ot");
    String notSecret = unique("Ns");
    String numeric =
        "7" + (100000000L + Math.abs(UUID.randomUUID().getLeastSignificantBits() % 899999999L));
    KnownSecrets.configure(
        ConfigFactory.parseString(
                """
                pubsub-worker {
                  lock-store.sql.password = "%s"
                  lock-store.sql.jdbc-url = "jdbc:postgresql://db/x?user=u&password=%s&ssl=true"
                  lock-store.redis.uri = "rediss://default:%s@cache:6378"
                  plugins.orders { api-key = "%s", client-secret = "%s", tokens = ["%s"] }
                  plugins.orders.h2 = "jdbc:h2:mem:x;PASSWORD=%s"
                  plugins.orders.pin-password = %s
                  observability.tracing.otlp-endpoint = "https://collector:%s@otel:4318/v1/traces"
                  plugins.orders.greeting = "%s"
                  plugins.orders.encoding = "jdbc:mariadb://db/x?passwordCharacterEncoding=UTF-8"
                }
                """
                    .formatted(
                        sqlPassword,
                        urlPassword,
                        userInfo,
                        apiKey,
                        clientSecret,
                        listToken,
                        h2Password,
                        numeric,
                        otlp,
                        notSecret))
            .resolve());

    for (String secret :
        new String[] {
          sqlPassword, urlPassword, userInfo, apiKey, clientSecret, h2Password, numeric, otlp
        }) {
      assertThat(KnownSecrets.mask("[" + secret + "]")).as(secret).isEqualTo("[***]");
    }
    // "tokens" is not a secret's name; a greeting and an encoding are not secrets.
    assertThat(KnownSecrets.mask(listToken)).isEqualTo(listToken);
    assertThat(KnownSecrets.mask(notSecret)).isEqualTo(notSecret);
    assertThat(KnownSecrets.mask("charset UTF-8")).isEqualTo("charset UTF-8");
  }

  @Test
  void the_config_read_last_replaces_the_one_before_unless_a_worker_keeps_it() {
    String first = unique("F1");
    String second = unique("S2");
    String kept = unique("K3");
    KnownSecrets.configure(ConfigFactory.parseString("a.password = \"" + first + "\""));
    assertThat(KnownSecrets.mask(first)).isEqualTo("***");
    KnownSecrets.configure(ConfigFactory.parseString("a.password = \"" + second + "\""));
    assertThat(KnownSecrets.mask(first)).isEqualTo(first);
    assertThat(KnownSecrets.mask(second)).isEqualTo("***");

    WorkerConfig running =
        WorkerConfig.load(
            ConfigFactory.parseString(
                    """
                    pubsub-worker {
                      project-id = p
                      lock-store.sql.password = "%s"
                      subscriptions { orders { handler = orders } }
                    }
                    """
                        .formatted(kept))
                .withFallback(ConfigFactory.defaultReference())
                .resolve());
    KnownSecrets.Held held = KnownSecrets.keep(running);
    KnownSecrets.configure(ConfigFactory.empty());
    assertThat(KnownSecrets.mask(kept)).isEqualTo("***");
    held.close();
    held.close();
    assertThat(KnownSecrets.mask(kept)).isEqualTo(kept);
  }

  @Test
  void a_value_shorter_than_the_minimum_is_masked_only_by_shape() {
    KnownSecrets.register("Zq1x7");
    assertThat(KnownSecrets.mask("a Zq1x7 b")).isEqualTo("a Zq1x7 b");
    assertThat(KnownSecrets.mask("?password=Zq1x7&x=1")).isEqualTo("?password=***&x=1");
    KnownSecrets.register("Zq1x7w");
    assertThat(KnownSecrets.mask("a Zq1x7w b")).isEqualTo("a *** b");
  }

  @Test
  void loading_a_worker_config_registers_its_secrets_before_any_problem_is_reported() {
    String password = unique("Wc");
    try {
      WorkerConfig.load(
          ConfigFactory.parseString(
                  """
                  pubsub-worker.lock-store.sql.password = "%s"
                  pubsub-worker.no-such-setting = 1
                  """
                      .formatted(password))
              .withFallback(ConfigFactory.defaultReference())
              .resolve());
    } catch (InvalidConfigException expected) {
      // the unknown setting
    }
    assertThat(KnownSecrets.mask("x " + password)).isEqualTo("x ***");
  }
}
