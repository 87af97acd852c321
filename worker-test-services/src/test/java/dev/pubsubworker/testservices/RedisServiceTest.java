package dev.pubsubworker.testservices;

import static org.assertj.core.api.Assertions.assertThat;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.junit.jupiter.api.Test;

class RedisServiceTest {

  @Test
  void value_round_trips_through_lettuce() {
    RedisService redis = TestServices.redis();
    String key = TestServices.uniqueName("redis_self_test") + ":greeting";

    RedisClient client = RedisClient.create(redis.uri());
    try (StatefulRedisConnection<String, String> connection = client.connect()) {
      RedisCommands<String, String> commands = connection.sync();
      commands.set(key, "hello");
      assertThat(commands.get(key)).isEqualTo("hello");
      assertThat(commands.del(key)).isEqualTo(1L);
    } finally {
      client.shutdown();
    }
  }

  @Test
  void resolves_once_per_jvm() {
    assertThat(TestServices.redis()).isSameAs(TestServices.redis());
    assertThat(TestServices.redis().uri()).startsWith("redis");
  }
}
