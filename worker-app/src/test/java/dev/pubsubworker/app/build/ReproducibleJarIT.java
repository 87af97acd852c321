package dev.pubsubworker.app.build;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Element;

/**
 * Reproducible jars: {@code project.build.outputTimestamp} in the parent makes two builds of the
 * same sources produce the same jar bytes. {@code worker-core} (the smallest module with no module
 * dependency) is built again, with the Maven wrapper and offline, in a temporary copy of the
 * repository at another path, with other file times, at another moment; its jar must equal the one
 * this build made byte for byte.
 *
 * <p>The shaded executable jar is not rebuilt (that is the whole reactor again). Its entries are
 * checked to carry nothing of the moment it was built: the entries of our modules carry the fixed
 * timestamp, and every other entry carries a time its dependency jar has for that name (the shade
 * plugin keeps a copied entry's time, and a merged services file's time is one of the merged
 * files'), or for a directory, a time some dependency jar has for an entry in it.
 */
class ReproducibleJarIT {

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final String CORE_JAR = "worker-core/target/pubsub-worker-core-%s.jar";
  private static final String SERVICES = "META-INF/services/";

  @TempDir Path dir;

  @Test
  void another_build_of_worker_core_gives_identical_jar_bytes() throws Exception {
    String version =
        BuildConventionsTest.child(
            BuildConventionsTest.pom(ROOT.resolve("pom.xml")).getDocumentElement(), "version");
    Path copy =
        copy(dir.resolve("elsewhere"), FileTime.from(Instant.parse("2020-01-01T00:00:00Z")));
    Path rebuilt = build(copy, version);
    Path ours = ROOT.resolve(String.format(CORE_JAR, version));

    assertThat(Files.mismatch(rebuilt, ours)).as("the two jars differ at byte").isEqualTo(-1);
  }

  @Test
  void the_executable_jar_carries_no_time_of_its_build() throws Exception {
    Element properties =
        BuildConventionsTest.descendants(
                BuildConventionsTest.pom(ROOT.resolve("pom.xml")).getDocumentElement(),
                "properties")
            .get(0);
    Instant timestamp =
        Instant.parse(BuildConventionsTest.child(properties, "project.build.outputTimestamp"));
    // Read back as written: exactly, or as a zone-less DOS time read in this JVM's zone.
    Set<Long> fixed = new HashSet<>(List.of(timestamp.toEpochMilli(), dosTime(timestamp)));
    Map<String, Long> others = new TreeMap<>();
    try (ZipFile jar = new ZipFile(ROOT.resolve("worker-app/target/pubsub-worker.jar").toFile())) {
      for (ZipEntry e : Collections.list(jar.entries())) {
        String name = e.getName();
        boolean ours =
            name.startsWith("dev/pubsubworker/")
                || name.startsWith("META-INF/maven/dev.pubsubworker/")
                || name.equals("META-INF/MANIFEST.MF");
        if (ours) {
          assertThat(fixed).as(name).contains(e.getTime());
        } else if (!fixed.contains(e.getTime())) {
          others.put(name, e.getTime());
        }
      }
    }
    // The times the dependency jars on this test's class path have for those names.
    Map<String, Set<Long>> sources = new HashMap<>();
    Set<Long> merged = new HashSet<>();
    String classPath = System.getProperty("java.class.path");
    for (String element : classPath.split(File.pathSeparator)) {
      if (!element.endsWith(".jar") || !Files.isRegularFile(Path.of(element))) {
        continue;
      }
      try (ZipFile jar = new ZipFile(element)) {
        for (ZipEntry e : Collections.list(jar.entries())) {
          // The shade plugin creates a directory with the time of the first file it adds there.
          String name = e.getName();
          for (int slash = name.indexOf('/');
              slash >= 0 && slash < name.length() - 1;
              slash = name.indexOf('/', slash + 1)) {
            String directory = name.substring(0, slash + 1);
            if (others.containsKey(directory)) {
              sources.computeIfAbsent(directory, n -> new HashSet<>()).add(e.getTime());
            }
          }
          if (others.containsKey(name)) {
            sources.computeIfAbsent(name, n -> new HashSet<>()).add(e.getTime());
          }
          if (name.startsWith(SERVICES) || name.equals("reference.conf")) {
            merged.add(e.getTime());
          }
        }
      }
    }
    assertThat(others).as("entries not at the fixed time").isNotEmpty();
    others.forEach(
        (name, time) -> {
          // One transformer merges every services file (and reference.conf): their newest time.
          Set<Long> allowed = new HashSet<>(sources.getOrDefault(name, Set.of()));
          if (name.startsWith(SERVICES) || name.equals("reference.conf")) {
            allowed.addAll(merged);
          }
          assertThat(allowed).as("a dependency jar's time for " + name).contains(time);
        });
  }

  /** What {@link ZipEntry#getTime()} reads back for an entry written with {@code instant}. */
  private static long dosTime(Instant instant) {
    ZipEntry probe = new ZipEntry("probe");
    probe.setTimeLocal(LocalDateTime.ofInstant(instant, ZoneOffset.UTC));
    return probe.getTime();
  }

  /** The parent pom, {@code .mvn} and worker-core's pom and main sources, under {@code to}. */
  private static Path copy(Path to, FileTime time) throws IOException {
    for (String part : List.of("pom.xml", ".mvn", "worker-core/pom.xml", "worker-core/src/main")) {
      Path from = ROOT.resolve(part);
      try (Stream<Path> files = Files.walk(from)) {
        for (Path file : files.toList()) {
          Path target = to.resolve(ROOT.relativize(file).toString());
          if (Files.isDirectory(file)) {
            Files.createDirectories(target);
          } else {
            Files.createDirectories(target.getParent());
            Files.copy(file, target);
            Files.setLastModifiedTime(target, time);
          }
        }
      }
    }
    return to;
  }

  /** Packages worker-core in {@code copy} with the wrapper, offline; returns the jar. */
  private static Path build(Path copy, String version) throws Exception {
    Path log = copy.resolve("build.log");
    Process maven =
        new ProcessBuilder(
                ROOT.resolve("mvnw").toString(),
                "-B",
                "-q",
                "-o",
                "-f",
                copy.resolve("worker-core/pom.xml").toString(),
                "package",
                "-Dmaven.test.skip=true",
                "-Dspotless.check.skip=true")
            .directory(copy.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    if (!maven.waitFor(5, TimeUnit.MINUTES)) {
      maven.destroyForcibly();
      fail("the build of worker-core did not finish:\n" + Files.readString(log));
    }
    assertThat(maven.exitValue()).as(Files.readString(log)).isZero();
    Path jar = copy.resolve(String.format(CORE_JAR, version));
    assertThat(jar).exists();
    return jar;
  }
}
