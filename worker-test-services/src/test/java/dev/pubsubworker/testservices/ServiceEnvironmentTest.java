package dev.pubsubworker.testservices;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ServiceEnvironmentTest {

  @TempDir Path workDir;

  @Test
  void gcloud_on_path_leads_to_its_installation() throws Exception {
    Path sdk = workDir.resolve("google-cloud-sdk");
    Path realGcloud = Files.createDirectories(sdk.resolve("bin")).resolve("gcloud");
    Files.writeString(realGcloud, "#!/bin/sh\n");
    Files.setPosixFilePermissions(realGcloud, PosixFilePermissions.fromString("rwxr-xr-x"));
    Path pathDir = Files.createDirectories(workDir.resolve("usr-bin"));
    Files.createSymbolicLink(pathDir.resolve("gcloud"), realGcloud);

    ServiceEnvironment environment =
        new TestEnvironments(workDir).set("PATH", pathDir.toString()).build();

    assertThat(environment.cloudSdkRoots().get(0)).isEqualTo(sdk.toRealPath());
    assertThat(environment.cloudSdkRoots()).contains(Path.of("/usr/lib/google-cloud-sdk"));
  }

  @Test
  void an_explicit_cloud_sdk_is_the_only_place_looked_at() {
    ServiceEnvironment environment =
        new TestEnvironments(workDir).hideCloudSdk(workDir.resolve("elsewhere")).build();

    assertThat(environment.cloudSdkRoots()).containsExactly(workDir.resolve("elsewhere"));
  }

  @Test
  void sources_default_to_all_and_can_be_narrowed() {
    assertThat(new TestEnvironments(workDir).build().enabledSources())
        .isEqualTo(EnumSet.allOf(ServiceSource.class));
    assertThat(
            new TestEnvironments(workDir)
                .set("TEST_SERVICES_SOURCES", " Local , docker,")
                .build()
                .enabledSources())
        .containsExactlyInAnyOrder(ServiceSource.LOCAL, ServiceSource.TESTCONTAINERS);
  }

  @Test
  void blank_variables_count_as_unset() {
    ServiceEnvironment environment =
        new TestEnvironments(workDir).set("REDIS_URL", "  ").set("CI", "TRUE").build();

    assertThat(environment.variable("REDIS_URL")).isEmpty();
    assertThat(environment.ci()).isTrue();
  }
}
