package dev.pubsubworker.bench;

import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;

/** Deletes a benchmark's Redis keys by prefix. */
final class RedisKeys {

  private RedisKeys() {}

  /** Unlinks every key under {@code prefix}; returns how many. */
  static long deleteByPrefix(String uri, String prefix) {
    RedisClient client = RedisClient.create(uri);
    long deleted = 0;
    try (StatefulRedisConnection<String, String> c = client.connect()) {
      ScanArgs args = ScanArgs.Builder.matches(prefix + "*").limit(1000);
      ScanCursor cursor = ScanCursor.INITIAL;
      do {
        KeyScanCursor<String> page = c.sync().scan(cursor, args);
        if (!page.getKeys().isEmpty()) {
          deleted += c.sync().unlink(page.getKeys().toArray(new String[0]));
        }
        cursor = page;
      } while (!cursor.isFinished());
    } finally {
      client.shutdown();
    }
    return deleted;
  }
}
