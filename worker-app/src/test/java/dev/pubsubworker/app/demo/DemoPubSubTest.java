package dev.pubsubworker.app.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code --pubsub}: embedded, emulator or a host:port, nothing else. */
class DemoPubSubTest {

  @Test
  void the_three_forms_parse() {
    assertThat(DemoPubSub.parse("embedded")).isEqualTo(DemoPubSub.EMBEDDED);
    assertThat(DemoPubSub.parse("EMULATOR").source()).isEqualTo(DemoPubSub.Source.GOOGLE_EMULATOR);
    assertThat(DemoPubSub.parse("127.0.0.1:8085"))
        .isEqualTo(new DemoPubSub(DemoPubSub.Source.RUNNING, Optional.of("127.0.0.1:8085")));
    assertThat(DemoPubSub.parse("[::1]:8085").hostPort()).hasValue("[::1]:8085");
    assertThat(DemoPubSub.parse("pubsub.local:65535").hostPort()).hasValue("pubsub.local:65535");
  }

  @ParameterizedTest(name = "[{0}]")
  @ValueSource(
      strings = {"", "docker", "8085", ":8085", "host:", "host:0", "host:65536", "http://h:1/"})
  void anything_else_is_refused_naming_the_value(String value) {
    assertThatThrownBy(() -> DemoPubSub.parse(value))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("must be embedded, emulator or HOST:PORT, but was '" + value + "'");
  }

  @Test
  void a_host_port_goes_with_a_running_server_only() {
    assertThatThrownBy(
            () -> new DemoPubSub(DemoPubSub.Source.EMBEDDED, Optional.of("127.0.0.1:8085")))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new DemoPubSub(DemoPubSub.Source.RUNNING, Optional.empty()))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
