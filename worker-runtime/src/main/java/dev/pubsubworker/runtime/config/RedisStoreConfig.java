package dev.pubsubworker.runtime.config;

import java.time.Duration;

/**
 * {@code pubsub-worker.lock-store.redis}.
 *
 * @param uri {@code redis://} or {@code rediss://} URI, with optional user and password
 * @param keyPrefix prefix of every record's Redis key
 * @param hashTag whether to wrap the prefix in a Redis Cluster hash tag
 * @param commandTimeout how long one command may take
 */
public record RedisStoreConfig(
    String uri, String keyPrefix, boolean hashTag, Duration commandTimeout) {

  /** Masks the password in the URI. */
  @Override
  public String toString() {
    return "RedisStoreConfig[uri="
        + Secrets.maskUri(uri)
        + ", keyPrefix="
        + keyPrefix
        + ", hashTag="
        + hashTag
        + ", commandTimeout="
        + commandTimeout
        + "]";
  }
}
