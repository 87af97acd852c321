package dev.pubsubworker.backend.redis;

import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/** The Redis the tests run against, and a plain client to look at it from the side. */
final class TestRedis {

  private TestRedis() {}

  /** The test Redis's URI. */
  static String uri() {
    return "redis://127.0.0.1:6379";
  }

  /** A key prefix no other test or run uses, ending in a colon. */
  static String uniquePrefix(String name) {
    return "pwtest_" + name + "_" + UUID.randomUUID().toString().substring(0, 8) + ":";
  }

  /** Settings on the test Redis under a fresh prefix. */
  static RedisLockSettings.Builder settings(String name) {
    return RedisLockSettings.newBuilder().uri(uri()).keyPrefix(uniquePrefix(name));
  }

  /** A side client for inspecting Redis directly; close it. */
  static Side side() {
    return new Side();
  }

  /** A plain binary-safe connection to the test Redis. */
  static final class Side implements AutoCloseable {
    private final RedisClient client = RedisClient.create(uri());
    private final StatefulRedisConnection<byte[], byte[]> connection =
        client.connect(ByteArrayCodec.INSTANCE);

    RedisCommands<byte[], byte[]> commands() {
      return connection.sync();
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
        if (!page.getKeys().isEmpty()) {
          deleted += commands().del(page.getKeys().toArray(new byte[0][])).intValue();
        }
        cursor = page;
      } while (!cursor.isFinished());
      return deleted;
    }

    @Override
    public void close() {
      connection.close();
      client.shutdown();
    }
  }
}
