package dev.pubsubworker.backend.redis;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A {@code redis-server} process of the test's own on a free loopback port, for tests that count
 * commands in {@code INFO commandstats} or flush the script cache: on the shared test Redis other
 * tests' (and other processes') commands would be counted too, and a flush would disturb them.
 * Skips the test without a {@code redis-server} binary (fails it under {@code CI=true}).
 */
final class PrivateRedis implements AutoCloseable {

  private final Process process;
  private final int port;

  private PrivateRedis(Process process, int port) {
    this.process = process;
    this.port = port;
  }

  /** Starts a server and waits until it answers. */
  static PrivateRedis start() {
    String binary = LocalRedisCluster.requireRedisServer();
    try {
      int port = LocalRedisCluster.freePortPair();
      Process process =
          new ProcessBuilder(
                  binary,
                  "--port",
                  Integer.toString(port),
                  "--bind",
                  "127.0.0.1",
                  "--save",
                  "",
                  "--appendonly",
                  "no")
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      PrivateRedis redis = new PrivateRedis(process, port);
      await()
          .atMost(Duration.ofSeconds(20))
          .ignoreExceptions()
          .until(
              () -> {
                try (TestRedis.Side side = redis.side()) {
                  return "PONG".equals(side.text().ping());
                }
              });
      return redis;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The server's URI. */
  String uri() {
    return "redis://127.0.0.1:" + port;
  }

  /** A side client on this server; close it. */
  TestRedis.Side side() {
    return TestRedis.side(uri());
  }

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly();
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }
}
