package dev.pubsubworker.emulators;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CloudEmulatorTest {

  @TempDir Path dir;

  private Path executable(Path file, String content) throws IOException {
    Files.createDirectories(file.getParent());
    Files.writeString(file, content);
    Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    return file;
  }

  @Test
  void the_launcher_is_taken_from_the_first_root_that_has_it_executable() throws Exception {
    Path empty = Files.createDirectories(dir.resolve("empty"));
    Path notExecutable = dir.resolve("plain").resolve(CloudEmulator.DATASTORE.relativePath());
    Files.createDirectories(notExecutable.getParent());
    Files.writeString(notExecutable, "#!/bin/sh\n");
    Path first = executable(dir.resolve("a").resolve(CloudEmulator.DATASTORE.relativePath()), "");
    executable(dir.resolve("b").resolve(CloudEmulator.DATASTORE.relativePath()), "");

    List<Path> roots =
        List.of(
            empty,
            dir.resolve("plain"),
            dir.resolve("missing"),
            dir.resolve("a"),
            dir.resolve("b"));
    assertThat(CloudEmulator.DATASTORE.findLauncher(roots)).contains(first);
    assertThat(CloudEmulator.PUBSUB.findLauncher(roots)).isEmpty();
  }

  @Test
  void each_emulator_listens_on_the_loopback_port_it_is_given() {
    Path launcher = Path.of("/sdk/launcher");
    assertThat(CloudEmulator.PUBSUB.command(launcher, 8085))
        .containsExactly("/sdk/launcher", "--host=127.0.0.1", "--port=8085");
    assertThat(CloudEmulator.DATASTORE.command(launcher, 8081))
        .containsExactly("/sdk/launcher", "start", "--host=127.0.0.1", "--port=8081", "--testing");
    assertThat(CloudEmulator.FIRESTORE.command(launcher, 8082))
        .containsExactly(
            "/sdk/launcher", "--database-mode=datastore-mode", "--host=127.0.0.1", "--port=8082");
  }

  /** A stand-in emulator: answers {@code GET /} with 200 on the port given as its argument. */
  public static final class HttpOk {
    public static void main(String[] args) throws IOException {
      HttpServer server =
          HttpServer.create(new InetSocketAddress("127.0.0.1", Integer.parseInt(args[0])), 0);
      server.createContext(
          "/",
          exchange -> {
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
          });
      server.start();
    }
  }

  @Test
  void start_runs_the_launcher_with_this_java_until_it_answers_http200() throws Exception {
    // The real launchers are scripts that run the emulator with "$JAVA"; so does this one.
    Path classes =
        Path.of(HttpOk.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    Path launcher =
        executable(
            dir.resolve("sdk").resolve(CloudEmulator.PUBSUB.relativePath()),
            "#!/bin/sh\n"
                + "echo \"java home $JAVA_HOME\"\n"
                + "port=\"${2#--port=}\"\n"
                + "exec \"$JAVA\" -cp '"
                + classes
                + "' '"
                + HttpOk.class.getName()
                + "' \"$port\"\n");

    try (ManagedProcess emulator =
        CloudEmulator.PUBSUB.start(launcher, dir.resolve("logs"), Duration.ofSeconds(60))) {
      Probes.httpOk("127.0.0.1:" + emulator.port(), Duration.ofSeconds(5));
      assertThat(emulator.logFile())
          .hasFileName("pubsub-emulator-" + emulator.port() + ".log")
          .hasParent(dir.resolve("logs"));
      assertThat(Files.readString(emulator.logFile()))
          .contains("java home " + System.getProperty("java.home"));
    }
  }
}
