package dev.pubsubworker.emulators;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CloudSdkTest {

  private static final String OVERRIDE = "SOME_CLOUD_SDK";

  @TempDir Path dir;

  private static Function<String, Optional<String>> env(Map<String, String> variables) {
    return name -> Optional.ofNullable(variables.get(name));
  }

  @Test
  void theOverrideIsTheOnlyRoot() {
    assertThat(
            CloudSdk.roots(
                OVERRIDE, env(Map.of(OVERRIDE, " /somewhere/sdk ", "HOME", dir.toString()))))
        .containsExactly(Path.of("/somewhere/sdk"));
  }

  @Test
  void withoutAnOverrideGcloudOnPathComesFirstAndHomeLast() throws Exception {
    Path sdk = dir.resolve("sdk");
    Path gcloud = Files.createDirectories(sdk.resolve("bin")).resolve("gcloud");
    Files.writeString(gcloud, "#!/bin/sh\n");
    Files.setPosixFilePermissions(gcloud, PosixFilePermissions.fromString("rwxr-xr-x"));
    // gcloud reached through a link, as /usr/bin/gcloud is: the root is the real installation.
    Path bin = Files.createDirectories(dir.resolve("usr-bin"));
    Files.createSymbolicLink(bin.resolve("gcloud"), gcloud);

    assertThat(
            CloudSdk.roots(
                OVERRIDE,
                env(
                    Map.of(
                        OVERRIDE,
                        "  ",
                        "PATH",
                        dir.resolve("nothing-here") + ":" + bin,
                        "HOME",
                        "/home/someone"))))
        .startsWith(sdk.toRealPath(), Path.of("/usr/lib/google-cloud-sdk"))
        .contains(Path.of("/usr/share/google-cloud-sdk"))
        .endsWith(Path.of("/home/someone/google-cloud-sdk"))
        .doesNotHaveDuplicates();
  }

  @Test
  void withNothingSetOnlyTheUsualPlacesAreLookedAt() {
    assertThat(CloudSdk.roots(OVERRIDE, env(Map.of())))
        .startsWith(Path.of("/usr/lib/google-cloud-sdk"), Path.of("/usr/share/google-cloud-sdk"))
        .allMatch(root -> root.isAbsolute() && root.endsWith("google-cloud-sdk"));
  }
}
