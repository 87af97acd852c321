package dev.pubsubworker.runtime.config;

import java.time.Duration;

/**
 * {@code pubsub-worker.lock-store.redis}.
 *
 * @param uri {@code redis://} or {@code rediss://} URI, with optional user and password
 * @param keyPrefix prefix of every record's Redis key
 * @param cluster whether to connect cluster-aware (the uri is a seed node)
 * @param hashTag a Redis Cluster hash tag between prefix and key, empty for none
 * @param commandTimeout how long one command may take
 * @param connectTimeout how long connecting may take
 */
public record RedisStoreConfig(
    String uri,
    String keyPrefix,
    boolean cluster,
    String hashTag,
    Duration commandTimeout,
    Duration connectTimeout) {

  /** Masks the password in the URI. */
  @Override
  public String toString() {
    return "RedisStoreConfig[uri="
        + Secrets.maskUri(uri)
        + ", keyPrefix="
        + keyPrefix
        + ", cluster="
        + cluster
        + ", hashTag="
        + hashTag
        + ", commandTimeout="
        + commandTimeout
        + ", connectTimeout="
        + connectTimeout
        + "]";
  }
}
