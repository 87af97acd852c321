package dev.pubsubworker.runtime.pubsub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link HandlerPools}: what waits for a busy handler thread can be run at once on the caller, and
 * from then on every task runs on its submitter's thread instead of waiting.
 */
class HandlerPoolsTest {

  @Test
  void queued_tasks_run_on_the_caller_and_later_ones_on_their_submitter() throws Exception {
    HandlerPools pools = new HandlerPools(1, "handler-test-");
    ScheduledExecutorService executor = pools.getExecutor();
    CountDownLatch busy = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    List<String> ranOn = new CopyOnWriteArrayList<>();
    try {
      executor.execute(
          () -> {
            busy.countDown();
            try {
              release.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          });
      assertThat(busy.await(10, TimeUnit.SECONDS)).isTrue();
      for (int i = 0; i < 3; i++) {
        executor.execute(() -> ranOn.add(Thread.currentThread().getName()));
      }
      assertThat(ranOn).as("waiting for the busy thread").isEmpty();

      assertThat(pools.runQueuedOnCaller()).isEqualTo(3);
      String me = Thread.currentThread().getName();
      assertThat(ranOn).containsExactly(me, me, me);

      executor.execute(() -> ranOn.add(Thread.currentThread().getName()));
      assertThat(ranOn).hasSize(4).last().isEqualTo(me);
    } finally {
      release.countDown();
      executor.shutdown();
      await().atMost(Duration.ofSeconds(10)).until(executor::isTerminated);
    }
  }

  @Test
  void handler_threads_are_daemons_named_for_the_subscription() throws Exception {
    HandlerPools pools = new HandlerPools(2, "handler-orders-");
    ScheduledExecutorService executor = pools.getExecutor();
    try {
      Thread[] thread = new Thread[1];
      executor.submit(() -> thread[0] = Thread.currentThread()).get(10, TimeUnit.SECONDS);
      assertThat(thread[0].getName()).startsWith("handler-orders-");
      assertThat(thread[0].isDaemon()).isTrue();
      assertThat(pools.shouldAutoClose()).isTrue();
    } finally {
      executor.shutdown();
    }
  }
}
