package dev.pubsubworker.runtime.config;

import static org.assertj.core.api.Assertions.assertThat;

import com.typesafe.config.ConfigFactory;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code observability.http-host} is checked before anything is resolved: a host name or an IP
 * address passes, text that is neither (an address with a part above 255, a bad label) is one
 * problem naming the setting. Whether a valid name resolves is known only when {@code run} binds
 * (exit 3, {@code RunCommandHttpPortTest}).
 */
class HttpHostTest {

  private static List<String> problems(String host) {
    String hocon =
        """
        pubsub-worker {
          project-id = p
          observability.http-host = "%s"
          subscriptions { orders { name = orders-sub, handler = orders } }
        }
        """
            .formatted(host);
    try {
      WorkerConfig.load(
          ConfigFactory.parseString(hocon)
              .withFallback(ConfigFactory.defaultReference())
              .resolve());
      return List.of();
    } catch (InvalidConfigException e) {
      return e.problems().stream().map(p -> p.path() + ": " + p.problem()).toList();
    }
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "0.0.0.0",
        "127.0.0.1",
        "255.255.255.255",
        "localhost",
        "metrics.internal",
        "pod-7.example.com.",
        "my_host",
        "::",
        "::1",
        "[::1]",
        "fe80::1%eth0",
        "::ffff:10.0.0.1",
        "no-such-host.invalid"
      })
  void host_names_and_ip_addresses_pass(String host) {
    assertThat(problems(host)).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "999.1.1.1",
        "1.2.3",
        "1.2.3.4.5",
        "256.0.0.1",
        "1..2.3",
        "-leading.example",
        "trailing-.example",
        "two..dots",
        "host.123",
        "spa ce",
        "[127.0.0.1]",
        "::g",
        "1:2:3:4:5:6:7:8:9",
        ""
      })
  void text_that_is_neither_is_one_problem_naming_the_setting(String host) {
    assertThat(problems(host))
        .singleElement()
        .asString()
        .startsWith(
            "pubsub-worker.observability.http-host: must be a host name or IP address, such as"
                + " 0.0.0.0, but '"
                + host
                + "' ");
  }

  @ParameterizedTest
  @ValueSource(strings = {"999.1.1.1"})
  void the_reported_case_says_why(String host) {
    assertThat(problems(host))
        .containsExactly(
            "pubsub-worker.observability.http-host: must be a host name or IP address, such as"
                + " 0.0.0.0, but '999.1.1.1' is not an IPv4 address (four parts, each 0..255) nor a"
                + " host name");
  }
}
