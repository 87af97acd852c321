package dev.pubsubworker.emulators;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/** Where the Google Cloud CLI (the Cloud SDK) may be installed on this machine. */
public final class CloudSdk {

  /** The package managers' and installers' usual locations, in the order they are looked at. */
  private static final List<String> USUAL_ROOTS =
      List.of(
          "/usr/lib/google-cloud-sdk",
          "/usr/share/google-cloud-sdk",
          "/opt/google-cloud-sdk",
          "/opt/homebrew/share/google-cloud-sdk",
          "/usr/local/share/google-cloud-sdk");

  private CloudSdk() {}

  /**
   * The folders that may hold the Google Cloud CLI, most specific first, without duplicates: the
   * value of {@code overrideVariable} alone when it is set (not blank); otherwise the installation
   * that {@code gcloud} on {@code PATH} belongs to ({@code <root>/bin/gcloud}, symbolic links
   * followed), {@code /usr/lib/google-cloud-sdk}, {@code /usr/share/google-cloud-sdk}, the other
   * usual locations ({@code /opt/google-cloud-sdk}, Homebrew's) and {@code $HOME/google-cloud-sdk}.
   * The folders are not checked to exist.
   *
   * @param overrideVariable the variable that, when set, names the only root to use
   * @param variables looks a variable up ({@code overrideVariable}, {@code PATH}, {@code HOME});
   *     empty when unset. Blank values count as unset; values are trimmed.
   */
  public static List<Path> roots(
      String overrideVariable, Function<String, Optional<String>> variables) {
    Function<String, Optional<String>> lookup =
        name -> variables.apply(name).map(String::trim).filter(value -> !value.isEmpty());
    Optional<String> override = lookup.apply(overrideVariable);
    if (override.isPresent()) {
      return List.of(Path.of(override.get()));
    }
    Set<Path> roots = new LinkedHashSet<>();
    gcloudOnPath(lookup.apply("PATH").orElse("")).ifPresent(roots::add);
    USUAL_ROOTS.forEach(root -> roots.add(Path.of(root)));
    lookup.apply("HOME").ifPresent(home -> roots.add(Path.of(home, "google-cloud-sdk")));
    return new ArrayList<>(roots);
  }

  /**
   * {@link #roots(String, Function)} with this process's environment variables.
   *
   * @param overrideVariable the variable that, when set, names the only root to use
   */
  public static List<Path> roots(String overrideVariable) {
    return roots(overrideVariable, name -> Optional.ofNullable(System.getenv(name)));
  }

  /** The SDK root that {@code gcloud} on {@code path} belongs to ({@code <root>/bin/gcloud}). */
  private static Optional<Path> gcloudOnPath(String path) {
    for (String dir : path.split(File.pathSeparator)) {
      if (dir.isBlank()) {
        continue;
      }
      Path gcloud = Path.of(dir, "gcloud");
      if (Files.isExecutable(gcloud)) {
        try {
          Path bin = gcloud.toRealPath().getParent();
          if (bin != null && bin.getParent() != null) {
            return Optional.of(bin.getParent());
          }
        } catch (IOException e) {
          // A dangling symlink: not a usable installation; keep looking.
        }
      }
    }
    return Optional.empty();
  }
}
