package dev.pubsubworker.backend.datastore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pubsubworker.core.Backoff;
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
  void the_retry_backoff_doubles_to_the_max_with_equal_jitter() {
    Backoff b = DatastoreTransactions.retryBackoff(builder(Map.of()).build());
    assertThat(b.jitter()).isEqualTo(Backoff.Jitter.EQUAL);
    assertThat(b.ceiling(0)).isEqualTo(DatastoreLockSettings.DEFAULT_INITIAL_BACKOFF);
    assertThat(b.ceiling(1)).isEqualTo(Duration.ofMillis(40));
    assertThat(b.ceiling(6)).isEqualTo(DatastoreLockSettings.DEFAULT_MAX_BACKOFF);
    assertThat(b.ceiling(99)).isEqualTo(DatastoreLockSettings.DEFAULT_MAX_BACKOFF);
    // Each wait is between half the ceiling and the ceiling.
    assertThat(b.withRandom(() -> 0).delay(1)).isEqualTo(Duration.ofMillis(20));
    assertThat(b.withRandom(() -> Math.nextDown(1.0)).delay(1))
        .isLessThan(Duration.ofMillis(40))
        .isGreaterThan(Duration.ofMillis(39));
    Backoff custom =
        DatastoreTransactions.retryBackoff(
            builder(Map.of())
                .initialBackoff(Duration.ofMillis(5))
                .maxBackoff(Duration.ofMillis(7))
                .build());
    assertThat(custom.ceiling(0)).isEqualTo(Duration.ofMillis(5));
    assertThat(custom.ceiling(1)).isEqualTo(Duration.ofMillis(7));
  }

  @Test
  void emulator_host_comes_from_the_environment_unless_set() {
    Map<String, String> env = Map.of("DATASTORE_EMULATOR_HOST", "localhost:8081");
    assertThat(builder(env).build().emulatorHost()).contains("localhost:8081");
    assertThat(builder(env).emulatorHost("127.0.0.1:9000").build().emulatorHost())
        .contains("127.0.0.1:9000");
    assertThatThrownBy(() -> builder(Map.of("DATASTORE_EMULATOR_HOST", "nonsense")).build())
        .hasMessageContaining("DATASTORE_EMULATOR_HOST must be host:port");
  }

  @Test
  void setters_reject_bad_values_saying_what_was_given() {
    DatastoreLockSettings.Builder b = DatastoreLockSettings.newBuilder();
    assertThatThrownBy(() -> b.maxAttempts(0))
        .hasMessage("maxAttempts must be 1 to 100, but was 0");
    assertThatThrownBy(() -> b.namespace("a/b")).hasMessageContaining("'a/b'");
    assertThatThrownBy(() -> b.namespace("__ns__")).hasMessageContaining("reserved");
    assertThatThrownBy(() -> b.kind("")).hasMessageContaining("kind must be");
    assertThatThrownBy(() -> b.kind("__k__")).hasMessageContaining("reserved");
    assertThatThrownBy(() -> b.databaseId("Bad_Id")).hasMessageContaining("'Bad_Id'");
    assertThatThrownBy(() -> b.rpcTimeout(Duration.ZERO)).hasMessageContaining("rpcTimeout");
    assertThatThrownBy(() -> b.initialBackoff(Duration.ofMillis(-1)))
        .hasMessageContaining("initialBackoff");
    assertThatThrownBy(() -> b.emulatorHost("localhost")).hasMessageContaining("host:port");
    assertThatThrownBy(() -> b.projectId(" ")).hasMessageContaining("projectId");
    assertThatThrownBy(
            () ->
                DatastoreLockSettings.newBuilder()
                    .initialBackoff(Duration.ofSeconds(2))
                    .maxBackoff(Duration.ofSeconds(1))
                    .build())
        .hasMessageContaining("maxBackoff");
  }

  @Test
  void default_database_has_two_spellings_and_to_builder_round_trips() {
    DatastoreLockSettings s =
        builder(Map.of()).databaseId("(default)").namespace("orders").kind("Lock").build();
    assertThat(s.databaseId()).isEmpty();
    DatastoreLockSettings copy = s.toBuilder().build();
    assertThat(copy.namespace()).isEqualTo("orders");
    assertThat(copy.kind()).isEqualTo("Lock");
    assertThat(builder(Map.of()).databaseId("locks-db").build().databaseId()).isEqualTo("locks-db");
  }

  @Test
  void durations_are_checked_with_the_shared_wording_and_backoffs_are_bounded() {
    DatastoreLockSettings.Builder b = builder(Map.of());
    assertThatThrownBy(() -> b.rpcTimeout(Duration.ZERO))
        .hasMessage("rpcTimeout must be >= 1ms, but was PT0S");
    assertThatThrownBy(() -> b.maxBackoff(Duration.ofHours(2)))
        .hasMessage("maxBackoff must be between PT0S and PT1H, but was PT2H");
    assertThatThrownBy(() -> b.initialBackoff(null)).hasMessage("initialBackoff");
    assertThat(b.initialBackoff(Duration.ZERO).maxBackoff(Duration.ZERO).build().maxBackoff())
        .isZero();
    assertThat(builder(Map.of()).build().indexExpiresAt())
        .isEqualTo(DatastoreLockSettings.DEFAULT_INDEX_EXPIRES_AT);
  }

  @Test
  void create_refuses_null_settings() {
    assertThatThrownBy(() -> DatastoreLockBackend.create(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("settings");
  }
}
