package dev.pubsubworker.testservices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import dev.pubsubworker.emulators.CloudEmulator;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.AssertionFailedError;
import org.opentest4j.TestAbortedException;

/**
 * Which source serves when: an environment variable before the local Cloud CLI before a container;
 * the Testcontainers fallback (the {@code gcloud} module's emulator containers, Redis and SQL
 * containers) only when a Docker engine answers; {@code CI=true} failing instead of skipping. The
 * container starter is a recording stand-in, so this runs without Docker; everything else (HTTP
 * health checks, Redis PING, the launched process) is real.
 */
class SourceSelectionTest {

  @TempDir Path workDir;

  private HttpServer answering;

  @AfterEach
  void stopServer() {
    if (answering != null) {
      answering.stop(0);
    }
  }

  /** A loopback HTTP server answering 200 "Ok" on {@code /}, as the emulators do when ready. */
  private HostPort emulatorLookalike() throws IOException {
    answering = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    answering.createContext(
        "/",
        exchange -> {
          byte[] body = "Ok".getBytes(StandardCharsets.US_ASCII);
          exchange.sendResponseHeaders(200, body.length);
          exchange.getResponseBody().write(body);
          exchange.close();
        });
    answering.start();
    return HostPort.loopback(answering.getAddress().getPort());
  }

  /**
   * A Cloud CLI root whose Pub/Sub emulator launcher starts a small Java HTTP server on the {@code
   * --port} it is given (run by the {@code JAVA} the launcher environment names).
   */
  private Path fakeCloudSdk() throws IOException {
    Path sdk = workDir.resolve("fake-cloud-sdk");
    Path source = sdk.resolve("HttpOk.java");
    Files.createDirectories(sdk);
    Files.writeString(
        source,
        String.join(
            "\n",
            "import com.sun.net.httpserver.HttpServer;",
            "import java.net.InetSocketAddress;",
            "public class HttpOk {",
            "  public static void main(String[] args) throws Exception {",
            "    HttpServer server = HttpServer.create(",
            "        new InetSocketAddress(\"127.0.0.1\", Integer.parseInt(args[0])), 0);",
            "    server.createContext(\"/\", exchange -> {",
            "      exchange.sendResponseHeaders(200, 2);",
            "      exchange.getResponseBody().write(\"Ok\".getBytes());",
            "      exchange.close();",
            "    });",
            "    server.start();",
            "  }",
            "}",
            ""));
    Path launcher = sdk.resolve(CloudEmulator.PUBSUB.relativePath());
    Files.createDirectories(launcher.getParent());
    Files.writeString(
        launcher,
        String.join(
            "\n",
            "#!/bin/sh",
            "for arg in \"$@\"; do",
            "  case \"$arg\" in --port=*) port=\"${arg#--port=}\" ;; esac",
            "done",
            "exec \"$JAVA\" '" + source + "' \"$port\"",
            ""));
    Files.setPosixFilePermissions(launcher, PosixFilePermissions.fromString("rwxr-xr-x"));
    return sdk;
  }

  @Test
  void an_emulator_host_wins_over_the_cli_and_docker() throws Exception {
    HostPort running = emulatorLookalike();
    RecordingContainers containers = RecordingContainers.refusing();
    ServiceRegistry registry =
        new TestEnvironments(workDir)
            .set(ServiceEnvironment.CLOUD_SDK_VARIABLE, fakeCloudSdk().toString())
            .set("PUBSUB_EMULATOR_HOST", running.toString())
            .docker(true)
            .containers(containers)
            .registry();

    PubSubEmulator emulator = registry.pubsub();

    assertThat(emulator.source()).isEqualTo(ServiceSource.ENV_VAR);
    assertThat(emulator.hostPort()).isEqualTo(running.toString());
    assertThat(containers.asked).isEmpty();
  }

  @Test
  void a_local_cloud_cli_wins_over_docker() throws Exception {
    RecordingContainers containers = RecordingContainers.refusing();
    TestEnvironments environment =
        new TestEnvironments(workDir)
            .set(ServiceEnvironment.CLOUD_SDK_VARIABLE, fakeCloudSdk().toString())
            .docker(true)
            .containers(containers);

    PubSubEmulator emulator = environment.registry().pubsub();

    assertThat(emulator.source()).isEqualTo(ServiceSource.LOCAL);
    assertThat(HostPort.parse(emulator.hostPort()).host()).isEqualTo("127.0.0.1");
    assertThat(containers.asked).isEmpty();
    assertThat(environment.reported)
        .singleElement()
        .asString()
        .startsWith("Pub/Sub emulator: local — ")
        .contains("fake-cloud-sdk");
  }

  @Test
  void without_variable_or_cli_the_gcloud_containers_serve_when_docker_answers() throws Exception {
    HostPort running = emulatorLookalike();
    RecordingContainers containers = RecordingContainers.answering(what -> running);
    TestEnvironments environment =
        new TestEnvironments(workDir)
            .hideCloudSdk(workDir.resolve("no-cloud-sdk"))
            .docker(true)
            .containers(containers);
    ServiceRegistry registry = environment.registry();

    assertThat(registry.pubsub().source()).isEqualTo(ServiceSource.TESTCONTAINERS);
    assertThat(registry.datastore().source()).isEqualTo(ServiceSource.TESTCONTAINERS);
    assertThat(registry.firestoreInDatastoreMode().source())
        .isEqualTo(ServiceSource.TESTCONTAINERS);
    assertThat(registry.pubsub().hostPort()).isEqualTo(running.toString());

    assertThat(containers.asked).containsExactly("PUBSUB", "DATASTORE", "FIRESTORE");
    assertThat(environment.reported)
        .hasSize(3)
        .allSatisfy(
            line ->
                assertThat(line)
                    .contains(": Testcontainers — " + ContainerServices.CLOUD_CLI_IMAGE + " at "));
  }

  @Test
  void without_docker_no_container_is_asked_for_and_ci_fails() {
    RecordingContainers containers = RecordingContainers.answering(what -> HostPort.loopback(1));
    ServiceRegistry registry =
        new TestEnvironments(workDir)
            .hideCloudSdk(workDir.resolve("no-cloud-sdk"))
            .docker(false)
            .containers(containers)
            .set("CI", "true")
            .registry();

    assertThatThrownBy(registry::datastore)
        .isExactlyInstanceOf(AssertionFailedError.class)
        .hasMessageEndingWith("; Testcontainers: no Docker engine answers]");
    assertThat(containers.asked).isEmpty();
  }

  @Test
  void a_container_that_cannot_start_is_named_in_the_skip_line() {
    ServiceRegistry registry =
        new TestEnvironments(workDir)
            .hideCloudSdk(workDir.resolve("no-cloud-sdk"))
            .docker(true)
            .containers(RecordingContainers.refusing())
            .registry();

    assertThatThrownBy(registry::pubsub)
        .isExactlyInstanceOf(TestAbortedException.class)
        .hasMessageEndingWith("; Testcontainers: cannot pull the image for PUBSUB]");
  }

  @Test
  void redis_comes_from_a_container_after_the_local_server_and_is_pinged() throws Exception {
    RedisService real = TestServices.redis();
    RecordingContainers containers =
        RecordingContainers.answering(what -> new HostPort(real.host(), real.port()));
    ServiceRegistry registry =
        new TestEnvironments(workDir)
            .closeLocalPorts()
            .set(ServiceEnvironment.SOURCES_VARIABLE, "local,testcontainers")
            .docker(true)
            .containers(containers)
            .registry();

    RedisService redis = registry.redis();

    assertThat(redis.source()).isEqualTo(ServiceSource.TESTCONTAINERS);
    assertThat(redis.port()).isEqualTo(real.port());
    assertThat(containers.asked).containsExactly("redis");
  }

  @Test
  void a_redis_container_that_does_not_answer_ping_is_not_used() throws Exception {
    int closed = TestEnvironments.closedPort();
    ServiceRegistry registry =
        new TestEnvironments(workDir)
            .closeLocalPorts()
            .set(ServiceEnvironment.SOURCES_VARIABLE, "testcontainers")
            .docker(true)
            .containers(RecordingContainers.answering(what -> HostPort.loopback(closed)))
            .registry();

    assertThatThrownBy(registry::redis)
        .isExactlyInstanceOf(TestAbortedException.class)
        .hasMessageContaining("; Testcontainers: ")
        .hasMessageNotContaining("Testcontainers: off");
  }
}
