/**
 * The Redis lock store: {@link dev.pubsubworker.backend.redis.RedisLockBackend}, configured by
 * {@link dev.pubsubworker.backend.redis.RedisLockSettings}. One hash per key, one Lua script per
 * verb, expiry judged on the Redis server's clock.
 */
package dev.pubsubworker.backend.redis;
