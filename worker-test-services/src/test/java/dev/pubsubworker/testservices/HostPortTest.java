package dev.pubsubworker.testservices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class HostPortTest {

  @ParameterizedTest
  @CsvSource({
    "localhost:8085, localhost, 8085",
    "http://127.0.0.1:8081/, 127.0.0.1, 8081",
    "'[::1]:9000', '[::1]', 9000"
  })
  void parsesTheEmulatorVariableForms(String value, String host, int port) {
    HostPort parsed = HostPort.parse(value);

    assertThat(parsed.host()).isEqualTo(host);
    assertThat(parsed.port()).isEqualTo(port);
  }

  @ParameterizedTest
  @ValueSource(strings = {"localhost", "localhost:", ":8085", "localhost:8085/path", "a b:1"})
  void rejects_what_is_not_host_port(String value) {
    assertThatThrownBy(() -> HostPort.parse(value))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'" + value + "' is not host:port");
  }
}
