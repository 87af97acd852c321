package dev.pubsubworker.spring.boot;

import static dev.pubsubworker.spring.boot.LockStores.set;

import dev.pubsubworker.backend.redis.RedisLockBackend;
import dev.pubsubworker.backend.redis.RedisLockSettings;
import dev.pubsubworker.core.LockBackend;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/** {@code lock-store.type = redis}: loaded only then. */
final class RedisLockStore {

  private static final String P = PubSubWorkerProperties.PREFIX + ".lock-store.redis.";

  private RedisLockStore() {}

  /** A backend on these settings; no I/O (the first verb connects). */
  static LockBackend create(PubSubWorkerProperties.Redis redis) {
    RedisLockSettings.Builder b = RedisLockSettings.newBuilder();
    // The URI can carry a password: the error shows a placeholder, and the backend's message never
    // repeats the URI.
    set(P + "uri", redis.getUri(), "(not shown)", b::uri);
    b.cluster(redis.isCluster());
    set(P + "key-prefix", redis.getKeyPrefix(), redis.getKeyPrefix(), b::keyPrefix);
    set(P + "hash-tag", redis.getHashTag(), redis.getHashTag(), b::hashTag);
    set(
        P + "command-timeout",
        redis.getCommandTimeout(),
        redis.getCommandTimeout(),
        b::commandTimeout);
    set(
        P + "connect-timeout",
        redis.getConnectTimeout(),
        redis.getConnectTimeout(),
        b::connectTimeout);
    set(P + "client-name", redis.getClientName(), redis.getClientName(), b::clientName);
    RedisLockSettings settings;
    try {
      settings = b.build();
    } catch (IllegalArgumentException e) {
      throw new InvalidConfigurationPropertyValueException(
          P + "cluster", redis.isCluster(), e.getMessage());
    }
    return RedisLockBackend.create(settings);
  }
}
