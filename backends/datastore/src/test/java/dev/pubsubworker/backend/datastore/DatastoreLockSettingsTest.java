package dev.pubsubworker.backend.datastore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DatastoreLockSettingsTest {

  private static DatastoreLockSettings.Builder builder(Map<String, String> env) {
    return DatastoreLockSettings.newBuilder().environment(env::get);
  }

  @Test
  void defaults_are_documented_constants() {
    DatastoreLockSettings s = builder(Map.of()).build();
    assertThat(s.projectId()).isNull();
    assertThat(s.databaseId()).isEmpty();
    assertThat(s.namespace()).isEmpty();
    assertThat(s.kind()).isEqualTo("PubsubWorkerLock");
    assertThat(s.maxAttempts()).isEqualTo(DatastoreLockSettings.DEFAULT_MAX_ATTEMPTS);
    assertThat(s.rpcTimeout()).isEqualTo(Duration.ofSeconds(10));
    assertThat(s.emulatorHost()).isEmpty();
    assertThat(s.credentials()).isEmpty();
    assertThat(s.indexExpiresAt()).isTrue();
  }

  @Test
  void emulator_host_comes_from_the_environment_unless_set() {
    Map<String, String> env = Map.of("DATASTORE_EMULATOR_HOST", "localhost:8081");
    assertThat(builder(env).build().emulatorHost()).contains("localhost:8081");
    assertThat(builder(env).setEmulatorHost("127.0.0.1:9000").build().emulatorHost())
        .contains("127.0.0.1:9000");
    assertThatThrownBy(() -> builder(Map.of("DATASTORE_EMULATOR_HOST", "nonsense")).build())
        .hasMessageContaining("DATASTORE_EMULATOR_HOST must be host:port");
  }

  @Test
  void setters_reject_bad_values_saying_what_was_given() {
    DatastoreLockSettings.Builder b = DatastoreLockSettings.newBuilder();
    assertThatThrownBy(() -> b.setMaxAttempts(0))
        .hasMessage("maxAttempts must be 1 to 100, but was 0");
    assertThatThrownBy(() -> b.setNamespace("a/b")).hasMessageContaining("'a/b'");
    assertThatThrownBy(() -> b.setNamespace("__ns__")).hasMessageContaining("reserved");
    assertThatThrownBy(() -> b.setKind("")).hasMessageContaining("kind must be");
    assertThatThrownBy(() -> b.setKind("__k__")).hasMessageContaining("reserved");
    assertThatThrownBy(() -> b.setDatabaseId("Bad_Id")).hasMessageContaining("'Bad_Id'");
    assertThatThrownBy(() -> b.setRpcTimeout(Duration.ZERO)).hasMessageContaining("rpcTimeout");
    assertThatThrownBy(() -> b.setInitialBackoff(Duration.ofMillis(-1)))
        .hasMessageContaining("initialBackoff");
    assertThatThrownBy(() -> b.setEmulatorHost("localhost")).hasMessageContaining("host:port");
    assertThatThrownBy(() -> b.setProjectId(" ")).hasMessageContaining("projectId");
    assertThatThrownBy(
            () ->
                DatastoreLockSettings.newBuilder()
                    .setInitialBackoff(Duration.ofSeconds(2))
                    .setMaxBackoff(Duration.ofSeconds(1))
                    .build())
        .hasMessageContaining("maxBackoff");
  }

  @Test
  void default_database_has_two_spellings_and_to_builder_round_trips() {
    DatastoreLockSettings s =
        builder(Map.of()).setDatabaseId("(default)").setNamespace("orders").setKind("Lock").build();
    assertThat(s.databaseId()).isEmpty();
    DatastoreLockSettings copy = s.toBuilder().build();
    assertThat(copy.namespace()).isEqualTo("orders");
    assertThat(copy.kind()).isEqualTo("Lock");
    assertThat(builder(Map.of()).setDatabaseId("locks-db").build().databaseId())
        .isEqualTo("locks-db");
  }
}
