package dev.pubsubworker.app.build;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.Enumeration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
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
 * dependency) is built twice, with the Maven wrapper and offline, in two temporary copies of the
 * repository at different paths and with different file times, and both jars must equal the one
 * this build made byte for byte. The shaded executable jar is not rebuilt (that is the whole
 * reactor again); its entries are checked to carry the one fixed timestamp instead.
 */
class ReproducibleJarIT {

  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final String CORE_JAR = "worker-core/target/worker-core-%s.jar";

  @TempDir Path dir;

  @Test
  void two_builds_of_worker_core_give_identical_jar_bytes() throws Exception {
    String version =
        BuildConventionsTest.child(
            BuildConventionsTest.pom(ROOT.resolve("pom.xml")).getDocumentElement(), "version");
    Path first =
        build(
            copy(dir.resolve("first"), FileTime.from(Instant.parse("2020-01-01T00:00:00Z"))),
            version);
    Path second = build(copy(dir.resolve("a/second"), FileTime.from(Instant.now())), version);

    assertThat(Files.mismatch(first, second))
        .as("the two builds' jars differ at byte")
        .isEqualTo(-1);
    Path ours = ROOT.resolve(String.format(CORE_JAR, version));
    assertThat(Files.mismatch(first, ours)).as("this build's jar differs at byte").isEqualTo(-1);
  }

  @Test
  void the_executable_jars_entries_all_carry_the_fixed_timestamp() throws Exception {
    Element properties =
        BuildConventionsTest.descendants(
                BuildConventionsTest.pom(ROOT.resolve("pom.xml")).getDocumentElement(),
                "properties")
            .get(0);
    Instant fixed =
        Instant.parse(BuildConventionsTest.child(properties, "project.build.outputTimestamp"));
    Set<Long> times = new TreeSet<>();
    try (ZipFile jar = new ZipFile(ROOT.resolve("worker-app/target/pubsub-worker.jar").toFile())) {
      Enumeration<? extends ZipEntry> entries = jar.entries();
      while (entries.hasMoreElements()) {
        times.add(entries.nextElement().getTime());
      }
    }
    assertThat(times).as("distinct entry times").hasSize(1);
    // A zip stores local date-time without a zone: allow for the zone it was read in.
    Instant stored = Instant.ofEpochMilli(times.iterator().next());
    assertThat(Duration.between(fixed, stored).abs()).isLessThanOrEqualTo(Duration.ofHours(14));
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
