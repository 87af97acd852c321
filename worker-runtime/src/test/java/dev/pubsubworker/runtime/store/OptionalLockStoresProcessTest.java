package dev.pubsubworker.runtime.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pubsubworker.runtime.cli.ExitCodes;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runtime declares the lock stores as optional dependencies: an application that depends on it
 * carries none of them, nor HikariCP or a JDBC driver, until it adds the one it configures. Run as
 * a process on the test class path without those libraries: the in-memory store works, and a
 * configured store whose library is missing is one config problem that names the dependency.
 */
class OptionalLockStoresProcessTest {

  /** Class-path entries of the stores, the pool and the drivers, as the build lays them out. */
  private static final Pattern STORE_LIBRARIES =
      Pattern.compile(
          "backends[/\\\\](redis|sql|datastore)[/\\\\]|worker-backend-|HikariCP"
              + "|postgresql-|mariadb-java-client|[/\\\\]h2-");

  @TempDir Path dir;

  @Test
  void the_class_path_of_these_runs_really_lacks_the_stores() {
    String full = System.getProperty("java.class.path");
    assertThat(Arrays.stream(full.split(File.pathSeparator)))
        .as("the test class path has the stores, so the filter has something to remove")
        .anyMatch(e -> STORE_LIBRARIES.matcher(e).find());
    assertThat(classPathWithoutStores().split(File.pathSeparator))
        .noneMatch(e -> STORE_LIBRARIES.matcher(e).find());
  }

  @Test
  void the_in_memory_store_needs_none_of_them() throws Exception {
    Run r = checkConfig("lock-store.type = in-memory");
    assertThat(r.exit()).as(r.output()).isEqualTo(ExitCodes.OK);
    assertThat(r.output()).contains("config OK").doesNotContain("NoClassDefFoundError");
  }

  @Test
  void redis_without_its_library_is_one_problem_naming_the_dependency() throws Exception {
    Run r = checkConfig("lock-store { type = redis, redis.uri = \"redis://127.0.0.1:6379\" }");
    assertThat(r.exit()).as(r.output()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(r.output())
        .contains(
            "pubsub-worker.lock-store.type: 'redis' needs dev.pubsubworker:pubsub-worker-backend-redis"
                + " on the class path")
        .contains("add it to the application's dependencies")
        .doesNotContain("NoClassDefFoundError")
        .doesNotContain("\tat ");
  }

  @Test
  void sql_without_its_libraries_names_both() throws Exception {
    Run r =
        checkConfig(
            "lock-store { type = sql, sql.jdbc-url = \"jdbc:postgresql://127.0.0.1:5432/test\" }");
    assertThat(r.exit()).as(r.output()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(r.output())
        .contains(
            "'sql' needs dev.pubsubworker:pubsub-worker-backend-sql and com.zaxxer:HikariCP on the class"
                + " path")
        .doesNotContain("NoClassDefFoundError");
  }

  @Test
  void datastore_without_its_library_names_it() throws Exception {
    Run r = checkConfig("lock-store.type = datastore");
    assertThat(r.exit()).as(r.output()).isEqualTo(ExitCodes.BAD_CONFIG);
    assertThat(r.output())
        .contains(
            "'datastore' needs dev.pubsubworker:pubsub-worker-backend-datastore on the class path");
  }

  private record Run(int exit, String output) {}

  private Run checkConfig(String lockStore) throws Exception {
    Path config = dir.resolve("worker.conf");
    Files.writeString(
        config,
        """
        pubsub-worker {
          project-id = p
          %s
          subscriptions { orders { handler = orders } }
        }
        """
            .formatted(lockStore));
    Path log = dir.resolve("out.log");
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-cp");
    command.add(classPathWithoutStores());
    command.add("dev.pubsubworker.runtime.cli.WorkerCli");
    command.addAll(List.of("check-config", "--config", config.toString()));
    Process p =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("check-config ended").isTrue();
    return new Run(p.exitValue(), Files.readString(log));
  }

  private static String classPathWithoutStores() {
    return String.join(
        File.pathSeparator,
        Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
            .filter(e -> !STORE_LIBRARIES.matcher(e).find())
            .toList());
  }
}
