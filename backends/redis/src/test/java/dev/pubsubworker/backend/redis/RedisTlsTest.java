package dev.pubsubworker.backend.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.core.LockState;
import io.lettuce.core.SslOptions;
import java.io.File;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertPathBuilderException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * {@code rediss://} against a local TLS-only {@code redis-server} with a password, its certificate
 * signed by a throw-away CA made here with {@code openssl}: trusted through {@code sslOptions} it
 * works; untrusted, or spoken to in plain text, it is a {@link LockBackendException}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RedisTlsTest {

  private static final String PASSWORD = "tls-s3cret";

  private Path dir;
  private Process server;
  private int port;

  @BeforeAll
  void startTlsRedis() throws Exception {
    String binary = LocalRedisCluster.requireRedisServer();
    dir = Files.createTempDirectory("pubsub-worker-redis-tls");
    run(
        "openssl",
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-subj",
        "/CN=pubsub-worker test CA");
    run(
        "openssl",
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=127.0.0.1");
    Files.writeString(dir.resolve("san.cnf"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
    run(
        "openssl",
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "1",
        "-out",
        "server.pem",
        "-extfile",
        "san.cnf");
    port = LocalRedisCluster.freePortPair();
    server =
        new ProcessBuilder(
                binary,
                "--port",
                "0",
                "--tls-port",
                Integer.toString(port),
                "--bind",
                "127.0.0.1",
                "--tls-cert-file",
                "server.pem",
                "--tls-key-file",
                "server.key",
                "--tls-ca-cert-file",
                "ca.pem",
                "--tls-auth-clients",
                "no",
                "--requirepass",
                PASSWORD,
                "--save",
                "",
                "--appendonly",
                "no")
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("redis.log").toFile())
            .start();
    await()
        .atMost(Duration.ofSeconds(20))
        .ignoreExceptions()
        .until(
            () -> {
              try (Socket s = new Socket("127.0.0.1", port)) {
                return s.isConnected();
              }
            });
  }

  @AfterAll
  void stopTlsRedis() throws InterruptedException {
    if (server != null) {
      server.destroy();
      server.waitFor(10, TimeUnit.SECONDS);
    }
    if (dir != null) {
      File[] files = dir.toFile().listFiles();
      if (files != null) {
        for (File f : files) {
          f.delete();
        }
      }
      dir.toFile().delete();
    }
  }

  private RedisLockSettings.Builder tls() {
    return RedisLockSettings.newBuilder()
        .uri("rediss://:" + PASSWORD + "@127.0.0.1:" + port)
        .keyPrefix(TestRedis.uniquePrefix("tls"))
        .connectTimeout(Duration.ofSeconds(5))
        .commandTimeout(Duration.ofSeconds(5));
  }

  @Test
  void rediss_with_the_server_ca_in_ssl_options_runs_every_verb() {
    RedisLockSettings settings =
        tls()
            .sslOptions(SslOptions.builder().trustManager(dir.resolve("ca.pem").toFile()).build())
            .build();
    assertThat(settings.tls()).isTrue();
    try (RedisLockBackend backend = RedisLockBackend.create(settings)) {
      backend.checkConnection();
      Claim c = ((ClaimResult.Won) backend.claim("k", Duration.ofSeconds(30), "t")).claim();
      assertThat(backend.complete(c, Duration.ofMinutes(1))).isTrue();
      assertThat(backend.inspect("k").orElseThrow().state()).isEqualTo(LockState.DONE);
      assertThat(backend.claim("k", Duration.ofSeconds(30), "u"))
          .isInstanceOf(ClaimResult.AlreadyDone.class);
      assertThat(backend.forget("k")).isTrue();
    }
  }

  @Test
  void an_untrusted_server_certificate_is_a_lock_backend_exception() {
    try (RedisLockBackend backend = RedisLockBackend.create(tls().build())) {
      assertThatThrownBy(backend::checkConnection)
          .isInstanceOf(LockBackendException.class)
          .hasMessageContaining("cannot connect")
          .satisfies(e -> assertThat(e.getMessage()).doesNotContain(PASSWORD))
          .hasRootCauseInstanceOf(CertPathBuilderException.class);
    }
  }

  @Test
  void plain_text_to_a_tls_port_is_a_lock_backend_exception() {
    RedisLockSettings settings =
        RedisLockSettings.newBuilder()
            .uri("redis://:" + PASSWORD + "@127.0.0.1:" + port)
            .keyPrefix(TestRedis.uniquePrefix("plain"))
            .connectTimeout(Duration.ofSeconds(2))
            .commandTimeout(Duration.ofSeconds(2))
            .build();
    try (RedisLockBackend backend = RedisLockBackend.create(settings)) {
      assertThatThrownBy(() -> backend.claim("k", Duration.ofSeconds(30), "t"))
          .isInstanceOf(LockBackendException.class)
          .hasMessageStartingWith("claim failed on redis prefix");
    }
  }

  private void run(String... command) throws IOException, InterruptedException {
    Process p =
        new ProcessBuilder(List.of(command))
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(dir.resolve("openssl.log").toFile())
            .start();
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      p.destroyForcibly();
      Assertions.fail(
          String.join(" ", command) + " failed: " + Files.readString(dir.resolve("openssl.log")));
    }
  }
}
