package dev.pubsubworker.testservices;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The Testcontainers fallback is compiled against the real {@code gcloud}, {@code postgresql} and
 * {@code mariadb} modules: each container is built (not started, so no Docker is needed) from the
 * image its module accepts; the gcloud module's constructors reject an incompatible image.
 */
class ContainerServicesTest {

  @Test
  void emulator_containers_expose_the_gcloud_module_ports() {
    assertThat(ContainerServices.pubsubContainer().getExposedPorts()).containsExactly(8085);
    assertThat(ContainerServices.datastoreContainer().getExposedPorts()).containsExactly(8081);
    assertThat(ContainerServices.firestoreContainer().getExposedPorts()).containsExactly(8080);
  }

  @Test
  void store_containers_use_the_test_database() {
    assertThat(ContainerServices.redisContainer().getExposedPorts()).containsExactly(6379);
    assertThat(ContainerServices.postgresContainer().getDatabaseName()).isEqualTo("test");
    assertThat(ContainerServices.mariadbContainer().getDatabaseName()).isEqualTo("test");
  }

  @Test
  void the_real_starter_is_the_default_of_the_system_environment() {
    assertThat(ServiceEnvironment.system().containers()).isSameAs(ContainerServices.DOCKER);
  }
}
