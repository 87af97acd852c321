package dev.pubsubworker.testservices;

import dev.pubsubworker.emulators.CloudEmulator;
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
 * exit (Testcontainers' Ryuk reaps them too if the JVM dies). Only asked after {@link DockerProbe}
 * found a Docker engine that answers. The emulators run in Testcontainers' {@code gcloud} module
 * containers ({@link PubSubEmulatorContainer}, {@link DatastoreEmulatorContainer}, {@link
 * FirestoreEmulatorContainer}).
 */
final class ContainerServices implements ContainerStarter {

  /** The starter that runs real containers through the local Docker engine. */
  static final ContainerStarter DOCKER = new ContainerServices();

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

  @Override
  public HostPort redis() {
    GenericContainer<?> container = redisContainer();
    start(container, "Redis container");
    return new HostPort(container.getHost(), container.getMappedPort(REDIS_PORT));
  }

  @Override
  public JdbcEndpoint postgres() {
    PostgreSQLContainer<?> container = postgresContainer();
    start(container, "PostgreSQL container");
    return new JdbcEndpoint(
        container.getJdbcUrl(), container.getUsername(), container.getPassword());
  }

  @Override
  public JdbcEndpoint mariadb() {
    MariaDBContainer<?> container = mariadbContainer();
    start(container, "MariaDB container");
    return new JdbcEndpoint(
        container.getJdbcUrl(), container.getUsername(), container.getPassword());
  }

  @Override
  public HostPort emulator(CloudEmulator emulator) {
    return switch (emulator) {
      case PUBSUB -> {
        PubSubEmulatorContainer container = pubsubContainer();
        start(container, "Pub/Sub emulator container");
        yield HostPort.parse(container.getEmulatorEndpoint());
      }
      case DATASTORE -> {
        DatastoreEmulatorContainer container = datastoreContainer();
        start(container, "Datastore emulator container");
        yield HostPort.parse(container.getEmulatorEndpoint());
      }
      case FIRESTORE -> {
        FirestoreEmulatorContainer container = firestoreContainer();
        start(container, "Firestore emulator container");
        yield HostPort.parse(container.getEmulatorEndpoint());
      }
    };
  }

  // The containers as configured, not started: building one needs no Docker engine.

  static GenericContainer<?> redisContainer() {
    return new GenericContainer<>(DockerImageName.parse(REDIS_IMAGE)).withExposedPorts(REDIS_PORT);
  }

  static PostgreSQLContainer<?> postgresContainer() {
    return new PostgreSQLContainer<>(DockerImageName.parse(POSTGRES_IMAGE))
        .withDatabaseName("test");
  }

  static MariaDBContainer<?> mariadbContainer() {
    return new MariaDBContainer<>(DockerImageName.parse(MARIADB_IMAGE)).withDatabaseName("test");
  }

  static PubSubEmulatorContainer pubsubContainer() {
    return new PubSubEmulatorContainer(DockerImageName.parse(CLOUD_CLI_IMAGE));
  }

  static DatastoreEmulatorContainer datastoreContainer() {
    return new DatastoreEmulatorContainer(DockerImageName.parse(CLOUD_CLI_IMAGE))
        .withFlags("--consistency=1.0 --no-store-on-disk");
  }

  static FirestoreEmulatorContainer firestoreContainer() {
    return new FirestoreEmulatorContainer(DockerImageName.parse(CLOUD_CLI_IMAGE))
        .withFlags("--database-mode=datastore-mode");
  }

  private static void start(GenericContainer<?> container, String name) {
    container.start();
    ShutdownActions.register(name, container::stop);
  }
}
