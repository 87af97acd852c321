package dev.pubsubworker.testservices;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.cloud.datastore.Datastore;
import com.google.cloud.datastore.Entity;
import com.google.cloud.datastore.Key;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class DatastoreEmulatorTest {

  static Stream<Arguments> emulators() {
    return Stream.of(
        Arguments.of(
            ServiceKind.DATASTORE_EMULATOR, (Supplier<DatastoreEmulator>) TestServices::datastore),
        Arguments.of(
            ServiceKind.FIRESTORE_EMULATOR,
            (Supplier<DatastoreEmulator>) TestServices::firestoreInDatastoreMode));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("emulators")
  void entity_round_trips_in_its_own_namespace(
      ServiceKind kind, Supplier<DatastoreEmulator> accessor) throws Exception {
    DatastoreEmulator emulator = accessor.get();
    assertThat(emulator.kind()).isEqualTo(kind);
    String namespace = emulator.newNamespace();

    // Datastore.close() declares Exception (InterruptedException included), so no
    // try-with-resources.
    Datastore datastore = emulator.newClient(namespace);
    Datastore otherNamespace = emulator.newClient(emulator.newNamespace());
    try {
      Key key = datastore.newKeyFactory().setKind("Lock").newKey("order-42");
      datastore.put(Entity.newBuilder(key).set("state", "DONE").set("fence", 3L).build());

      Entity read = datastore.get(key);
      assertThat(read).isNotNull();
      assertThat(read.getKey().getNamespace()).isEqualTo(namespace);
      assertThat(read.getString("state")).isEqualTo("DONE");
      assertThat(read.getLong("fence")).isEqualTo(3L);

      Key sameNameElsewhere = otherNamespace.newKeyFactory().setKind("Lock").newKey("order-42");
      assertThat(otherNamespace.get(sameNameElsewhere)).isNull();
    } finally {
      datastore.close();
      otherNamespace.close();
    }
  }
}
