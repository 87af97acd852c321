package dev.pubsubworker.backend.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.pubsubworker.core.ClaimResult;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * What a backend owns and gives back: the driver resources it makes for itself (event loops, timer)
 * end with {@link RedisLockBackend#close()}; resources passed in are only used, and keep serving
 * their owner after it.
 */
class RedisLifecycleTest {

  private static final Duration LEASE = Duration.ofSeconds(30);

  @Test
  void close_ends_every_driver_thread_the_backend_started() {
    // The settings first: finding the test server may start (and end) clients of its own.
    RedisLockSettings settings = TestRedis.settings("lifecycle").build();
    Set<Long> before = threadIds();
    RedisLockBackend backend = RedisLockBackend.create(settings);
    try {
      backend.checkConnection();
      // A verb on the event loop and one on the timer (the command timeout), so both have started.
      assertThat(backend.claim("k", LEASE, "t")).isInstanceOf(ClaimResult.Won.class);
      assertThat(startedSince(before)).anyMatch(t -> t.getName().startsWith("lettuce-"));
      backend.forget("k");
    } finally {
      backend.close();
    }
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(startedSince(before))
                    .filteredOn(t -> t.getName().startsWith("lettuce-"))
                    .isEmpty());
  }

  @Test
  void resources_passed_in_outlive_the_backend() throws Exception {
    ClientResources resources = DefaultClientResources.create();
    try {
      RedisLockSettings settings =
          TestRedis.settings("lifecycle_shared").clientResources(resources).build();
      try (RedisLockBackend first = RedisLockBackend.create(settings)) {
        assertThat(first.claim("k", LEASE, "t")).isInstanceOf(ClaimResult.Won.class);
      }
      assertThat(resources.eventExecutorGroup().isShuttingDown()).isFalse();
      try (RedisLockBackend second = RedisLockBackend.create(settings)) {
        assertThat(second.claim("k", LEASE, "u")).isInstanceOf(ClaimResult.HeldByOther.class);
        second.forget("k");
      }
    } finally {
      resources.shutdown(0, 2, TimeUnit.SECONDS).get(10, TimeUnit.SECONDS);
    }
  }

  private static Set<Long> threadIds() {
    return Thread.getAllStackTraces().keySet().stream()
        .map(Thread::getId)
        .collect(Collectors.toSet());
  }

  private static List<Thread> startedSince(Set<Long> before) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> !before.contains(t.getId()) && t.isAlive())
        .toList();
  }
}
