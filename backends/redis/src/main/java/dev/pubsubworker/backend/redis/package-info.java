/**
 * The Redis lock store: {@link dev.pubsubworker.backend.redis.RedisLockBackend}, configured by
 * {@link dev.pubsubworker.backend.redis.RedisLockSettings}. One string per key (value and Redis
 * expiry), one Lua script per verb (one {@code EVALSHA}), expiry judged on the Redis server's
 * clock.
 */
package dev.pubsubworker.backend.redis;
