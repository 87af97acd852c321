package dev.pubsubworker.backend.redis;

import static org.awaitility.Awaitility.await;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * A three-node Redis Cluster of local {@code redis-server} processes on free loopback ports,
 * started once per test JVM on first use and stopped when the JVM exits. Without a {@code
 * redis-server} binary the tests that need it are skipped, or fail under {@code CI=true}, like the
 * test-services facility does.
 */
final class LocalRedisCluster {

  private static final int NODES = 3;
  private static LocalRedisCluster shared;

  private final List<Process> processes = new ArrayList<>();
  private final List<Integer> ports = new ArrayList<>();
  private final Path dir;

  private LocalRedisCluster(String binary) throws IOException {
    dir = Files.createTempDirectory("pubsub-worker-redis-cluster");
    Runtime.getRuntime().addShutdownHook(new Thread(this::stop, "redis-cluster-stop"));
    for (int i = 0; i < NODES; i++) {
      int port = freePortPair();
      ports.add(port);
      ProcessBuilder pb =
          new ProcessBuilder(
                  binary,
                  "--port",
                  Integer.toString(port),
                  "--bind",
                  "127.0.0.1",
                  "--cluster-enabled",
                  "yes",
                  "--cluster-config-file",
                  "nodes-" + port + ".conf",
                  "--dir",
                  dir.toString(),
                  "--save",
                  "",
                  "--appendonly",
                  "no")
              .redirectErrorStream(true)
              .redirectOutput(dir.resolve("redis-" + port + ".log").toFile());
      processes.add(pb.start());
    }
    int slotsPerNode = 16384 / NODES;
    for (int i = 0; i < NODES; i++) {
      int from = i * slotsPerNode;
      int to = i == NODES - 1 ? 16383 : from + slotsPerNode - 1;
      int port = ports.get(i);
      await()
          .atMost(Duration.ofSeconds(20))
          .ignoreExceptions()
          .until(() -> call(port, "PING").equals("PONG"));
      call(port, "CLUSTER", "ADDSLOTSRANGE", Integer.toString(from), Integer.toString(to));
    }
    for (int i = 1; i < NODES; i++) {
      call(ports.get(0), "CLUSTER", "MEET", "127.0.0.1", Integer.toString(ports.get(i)));
    }
    for (int port : ports) {
      await()
          .atMost(Duration.ofSeconds(30))
          .ignoreExceptions()
          .until(
              () ->
                  info(port).contains("cluster_state:ok") && info(port).contains("known_nodes:3"));
    }
  }

  /** The shared cluster, started on first use. */
  static synchronized LocalRedisCluster shared() {
    if (shared == null) {
      String binary = requireRedisServer();
      try {
        shared = new LocalRedisCluster(binary);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return shared;
  }

  /** A seed node's URI. */
  String seedUri() {
    return "redis://127.0.0.1:" + ports.get(0);
  }

  /** Every node's URI. */
  List<String> nodeUris() {
    return ports.stream().map(p -> "redis://127.0.0.1:" + p).toList();
  }

  private void stop() {
    for (Process p : processes) {
      p.destroy();
    }
    for (Process p : processes) {
      try {
        p.waitFor();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    File[] files = dir.toFile().listFiles();
    if (files != null) {
      for (File f : files) {
        f.delete();
      }
    }
    dir.toFile().delete();
  }

  private static String info(int port) {
    RedisClient client = RedisClient.create("redis://127.0.0.1:" + port);
    try (StatefulRedisConnection<String, String> c = client.connect()) {
      return c.sync().clusterInfo();
    } finally {
      client.shutdown();
    }
  }

  private static String call(int port, String command, String... args) {
    RedisClient client = RedisClient.create("redis://127.0.0.1:" + port);
    try (StatefulRedisConnection<String, String> c = client.connect()) {
      CommandArgs<String, String> commandArgs = new CommandArgs<>(StringCodec.UTF8);
      for (String a : args) {
        commandArgs.add(a);
      }
      return c.sync()
          .dispatch(
              CommandType.valueOf(command), new StatusOutput<>(StringCodec.UTF8), commandArgs);
    } finally {
      client.shutdown();
    }
  }

  /** The redis-server binary; skips the test without one, or fails it under {@code CI=true}. */
  static String requireRedisServer() {
    String binary = findRedisServer();
    if (binary == null) {
      String why = "no redis-server binary on PATH: install Redis (apt-get install redis-server)";
      if ("true".equals(System.getenv("CI"))) {
        Assertions.fail(why);
      }
      Assumptions.abort(why);
    }
    return binary;
  }

  private static String findRedisServer() {
    String path = System.getenv("PATH");
    List<String> dirs = new ArrayList<>();
    if (path != null) {
      dirs.addAll(List.of(path.split(File.pathSeparator)));
    }
    dirs.add("/usr/bin");
    dirs.add("/usr/local/bin");
    for (String d : dirs) {
      File f = new File(d, "redis-server");
      if (f.canExecute()) {
        return f.getPath();
      }
    }
    return null;
  }

  /** A free port whose cluster bus port (+10000) is free too. */
  static int freePortPair() throws IOException {
    for (int attempt = 0; attempt < 200; attempt++) {
      int port = ThreadLocalRandom.current().nextInt(20_000, 30_000);
      if (free(port) && free(port + 10_000)) {
        return port;
      }
    }
    throw new IOException("no free port pair for a Redis Cluster node");
  }

  private static boolean free(int port) {
    try (ServerSocket s = new ServerSocket(port, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.isBound();
    } catch (IOException e) {
      return false;
    }
  }
}
