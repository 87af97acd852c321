package dev.pubsubworker.testservices;

import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.DatastoreEmulatorContainer;
import org.testcontainers.containers.FirestoreEmulatorContainer;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.MariaDBContainer;
import org.testcontainers.containers.PostgreSQLContainer;
import org.testcontainers.containers.PubSubEmulatorContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * The Testcontainers source: one container per service, started on first use and stopped at JVM
 * exit (Testcontainers' Ryuk reaps them too if the JVM dies). Only loaded after {@link DockerProbe}
 * found Testcontainers on the class path and a Docker engine that answers.
 */
final class ContainerServices {

  static final String REDIS_IMAGE = "redis:7-alpine";
  static final String POSTGRES_IMAGE = "postgres:16-alpine";
  static final String MARIADB_IMAGE = "mariadb:11";

  /** Google's Cloud CLI image with the emulators, as the Testcontainers gcloud module expects. */
  static final String CLOUD_CLI_IMAGE = "gcr.io/google.com/cloudsdktool/google-cloud-cli:emulators";

  private static final int REDIS_PORT = 6379;

  private ContainerServices() {}

  static boolean dockerAvailable() {
    return DockerClientFactory.instance().isDockerAvailable();
  }

  static HostPort redis() {
    GenericContainer<?> container =
        new GenericContainer<>(DockerImageName.parse(REDIS_IMAGE)).withExposedPorts(REDIS_PORT);
    start(container, "Redis container");
    return new HostPort(container.getHost(), container.getMappedPort(REDIS_PORT));
  }

  static JdbcEndpoint postgres() {
    PostgreSQLContainer<?> container =
        new PostgreSQLContainer<>(DockerImageName.parse(POSTGRES_IMAGE)).withDatabaseName("test");
    start(container, "PostgreSQL container");
    return new JdbcEndpoint(
        container.getJdbcUrl(), container.getUsername(), container.getPassword());
  }

  static JdbcEndpoint mariadb() {
    MariaDBContainer<?> container =
        new MariaDBContainer<>(DockerImageName.parse(MARIADB_IMAGE)).withDatabaseName("test");
    start(container, "MariaDB container");
    return new JdbcEndpoint(
        container.getJdbcUrl(), container.getUsername(), container.getPassword());
  }

  static HostPort pubsub() {
    PubSubEmulatorContainer container =
        new PubSubEmulatorContainer(DockerImageName.parse(CLOUD_CLI_IMAGE));
    start(container, "Pub/Sub emulator container");
    return HostPort.parse(container.getEmulatorEndpoint());
  }

  static HostPort datastore() {
    DatastoreEmulatorContainer container =
        new DatastoreEmulatorContainer(DockerImageName.parse(CLOUD_CLI_IMAGE))
            .withFlags("--consistency=1.0 --no-store-on-disk");
    start(container, "Datastore emulator container");
    return HostPort.parse(container.getEmulatorEndpoint());
  }

  static HostPort firestoreInDatastoreMode() {
    FirestoreEmulatorContainer container =
        new FirestoreEmulatorContainer(DockerImageName.parse(CLOUD_CLI_IMAGE))
            .withFlags("--database-mode=datastore-mode");
    start(container, "Firestore emulator container");
    return HostPort.parse(container.getEmulatorEndpoint());
  }

  private static void start(GenericContainer<?> container, String name) {
    container.start();
    ShutdownActions.register(name, container::stop);
  }
}
