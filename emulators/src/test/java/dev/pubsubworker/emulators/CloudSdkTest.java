package dev.pubsubworker.emulators;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
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
  void the_override_is_the_only_root() {
    assertThat(
            CloudSdk.roots(
                OVERRIDE, env(Map.of(OVERRIDE, " /somewhere/sdk ", "HOME", dir.toString()))))
        .containsExactly(Path.of("/somewhere/sdk"));
  }

  @Test
  void without_an_override_gcloud_on_path_comes_first_and_home_last() throws Exception {
    // A stale link to a removed installation is passed over; the next gcloud on PATH counts.
    Path stale = Files.createDirectories(dir.resolve("stale"));
    Files.createSymbolicLink(stale.resolve("gcloud"), dir.resolve("removed/bin/gcloud"));
    Path gcloud = Files.createDirectories(dir.resolve("sdk/bin")).resolve("gcloud");
    Files.writeString(gcloud, "#!/bin/sh\n");
    gcloud.toFile().setExecutable(true);
    String path =
        String.join(File.pathSeparator, "", stale.toString(), gcloud.getParent().toString());

    List<Path> roots =
        CloudSdk.roots(
            OVERRIDE, env(Map.of(OVERRIDE, "  ", "PATH", path, "HOME", "/home/someone")));

    assertThat(roots)
        .startsWith(dir.resolve("sdk").toRealPath(), Path.of("/usr/lib/google-cloud-sdk"))
        .contains(Path.of("/usr/share/google-cloud-sdk"))
        .endsWith(Path.of("/home/someone/google-cloud-sdk"))
        .doesNotHaveDuplicates();
  }

  @Test
  void with_nothing_set_only_the_usual_places_are_looked_at() {
    assertThat(CloudSdk.roots(OVERRIDE, env(Map.of())))
        .startsWith(Path.of("/usr/lib/google-cloud-sdk"), Path.of("/usr/share/google-cloud-sdk"))
        .allMatch(root -> root.isAbsolute() && root.endsWith("google-cloud-sdk"));
  }
}
