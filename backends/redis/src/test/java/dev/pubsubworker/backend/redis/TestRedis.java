package dev.pubsubworker.backend.redis;

import dev.pubsubworker.testservices.TestServices;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/** The Redis the tests run against, and a plain client to look at it from the side. */
final class TestRedis {

  private TestRedis() {}

  /** The test Redis's URI, from the test-services facility (skips or fails if there is none). */
  static String uri() {
    return TestServices.redis().uri();
  }

  /** A key prefix no other test or run uses, ending in a colon. */
  static String uniquePrefix(String name) {
    return TestServices.uniqueName("pwtest_" + name) + ":";
  }

  /** Settings on the test Redis under a fresh prefix. */
  static RedisLockSettings.Builder settings(String name) {
    return RedisLockSettings.newBuilder().uri(uri()).keyPrefix(uniquePrefix(name));
  }

  /** A side client for inspecting Redis directly; close it. */
  static Side side() {
    return new Side(uri());
  }

  /** A side client on another server (a cluster node, say); close it. */
  static Side side(String uri) {
    return new Side(uri);
  }

  /** A plain binary-safe connection to the test Redis. */
  static final class Side implements AutoCloseable {
    private final RedisClient client;
    private final StatefulRedisConnection<byte[], byte[]> connection;
    private final StatefulRedisConnection<String, String> text;

    Side(String uri) {
      client = RedisClient.create(uri);
      connection = client.connect(ByteArrayCodec.INSTANCE);
      text = client.connect();
    }

    /** Binary-safe commands. */
    RedisCommands<byte[], byte[]> commands() {
      return connection.sync();
    }

    /** Text commands. */
    RedisCommands<String, String> text() {
      return text.sync();
    }

    /** Runs a command that answers with a status ({@code OK}), e.g. {@code CLIENT PAUSE 100}. */
    String call(String command, String... args) {
      CommandArgs<String, String> commandArgs = new CommandArgs<>(StringCodec.UTF8);
      for (String a : args) {
        commandArgs.add(a);
      }
      return text()
          .dispatch(
              CommandType.valueOf(command), new StatusOutput<>(StringCodec.UTF8), commandArgs);
    }

    /** A counter from {@code INFO commandstats}, e.g. calls of {@code evalsha}; 0 if absent. */
    long commandCalls(String command) {
      for (String line : text().info("commandstats").split("\r?\n")) {
        if (line.startsWith("cmdstat_" + command + ":")) {
          for (String field : line.substring(line.indexOf(':') + 1).split(",")) {
            if (field.startsWith("calls=")) {
              return Long.parseLong(field.substring("calls=".length()));
            }
          }
        }
      }
      return 0;
    }

    /** The id of the connection named {@code name} if it is parked on a paused EVALSHA. */
    Optional<Long> parkedClient(String name) {
      for (String line : text().clientList().split("\r?\n")) {
        List<String> fields = Arrays.asList(line.split(" "));
        if (fields.contains("name=" + name)
            && fields.contains("cmd=evalsha")
            && fields.stream().anyMatch(f -> f.startsWith("flags=") && f.contains("b"))) {
          for (String f : fields) {
            if (f.startsWith("id=")) {
              return Optional.of(Long.parseLong(f.substring(3)));
            }
          }
        }
      }
      return Optional.empty();
    }

    static byte[] bytes(String s) {
      return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Deletes every key under the namespace; returns how many. */
    int deleteAll(String namespace) {
      ScanArgs args = ScanArgs.Builder.matches(KeyLayout.globEscape(namespace) + "*").limit(1000);
      ScanCursor cursor = ScanCursor.INITIAL;
      int deleted = 0;
      do {
        KeyScanCursor<byte[]> page = commands().scan(cursor, args);
        // One key per DEL: on a cluster node a multi-key DEL must stay within one slot.
        for (byte[] key : page.getKeys()) {
          deleted += commands().del(key).intValue();
        }
        cursor = page;
      } while (!cursor.isFinished());
      return deleted;
    }

    @Override
    public void close() {
      connection.close();
      text.close();
      client.shutdown();
    }
  }
}
