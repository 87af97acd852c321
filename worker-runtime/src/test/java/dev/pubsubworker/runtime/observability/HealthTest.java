package dev.pubsubworker.runtime.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.pubsubworker.backend.memory.InMemoryLockBackend;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.GuardListener;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.runtime.pubsub.RunningHandler;
import dev.pubsubworker.runtime.store.LockStoreCalls;
import dev.pubsubworker.testkit.ManualTime;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/** The liveness and readiness rules, on a manual clock. */
class HealthTest {

  private final ManualTime time = new ManualTime();
  private final LockStoreFreshness store = new LockStoreFreshness(time.clock());
  private final FakeWorker worker = new FakeWorker();
  private final LockStoreCalls calls = new LockStoreCalls(time.clock());
  private final Health health =
      new Health(
          worker, store, Duration.ofSeconds(30), time.clock(), calls, Duration.ofSeconds(60));

  @Test
  void ready_only_when_running_and_the_lock_store_answered_recently() {
    worker.state = WorkerStatus.State.NOT_STARTED;
    assertThat(health.readiness().ok()).isFalse();
    assertThat(health.readiness().text())
        .contains("subscribers not started yet")
        .contains("lock store has not answered yet");

    store.answered();
    assertThat(health.readiness().text()).isEqualTo("not ready: subscribers not started yet");

    worker.state = WorkerStatus.State.RUNNING;
    assertThat(health.readiness().ok()).isTrue();
    time.advance(Duration.ofSeconds(30));
    assertThat(health.readiness().ok()).as("exactly stale-after old is still fresh").isTrue();
    assertThat(health.readiness().text())
        .isEqualTo("ready: every subscriber is running; lock store answered 30.0s ago");

    time.advance(Duration.ofMillis(1));
    store.failed("probe failed: connection refused");
    assertThat(health.readiness().ok()).isFalse();
    assertThat(health.readiness().text())
        .isEqualTo(
            "not ready: lock store has not answered for 30.0s (stale after 30.0s) (last error:"
                + " probe failed: connection refused)");
  }

  @Test
  void a_successful_guard_call_counts_as_an_answer_and_a_failed_one_does_not() {
    worker.state = WorkerStatus.State.RUNNING;
    store.backendCall(GuardListener.Verb.CLAIM, Duration.ofMillis(1), false);
    assertThat(health.readiness().ok()).isFalse();
    assertThat(health.readiness().text()).contains("last error: claim failed");
    store.backendCall(GuardListener.Verb.COMPLETE, Duration.ofMillis(1), true);
    assertThat(health.readiness().ok()).isTrue();
  }

  @Test
  void not_ready_while_a_subscriber_is_down_or_the_worker_stops_or_failed() {
    store.answered();
    worker.state = WorkerStatus.State.SUBSCRIBER_DOWN;
    assertThat(health.readiness().text()).isEqualTo("not ready: a subscriber is not pulling");
    worker.state = WorkerStatus.State.STOPPING;
    assertThat(health.readiness().text()).isEqualTo("not ready: stopping");
    worker.state = WorkerStatus.State.FAILED;
    worker.failure = new IllegalStateException("subscriber of orders failed");
    assertThat(health.readiness().ok()).isFalse();
  }

  @Test
  void live_unless_failed_even_while_stopping() {
    for (WorkerStatus.State s : WorkerStatus.State.values()) {
      worker.state = s;
      assertThat(health.liveness().ok()).as(s.name()).isEqualTo(s != WorkerStatus.State.FAILED);
    }
    worker.state = WorkerStatus.State.FAILED;
    worker.failure = new IllegalStateException("subscriber of orders failed");
    assertThat(health.liveness().text())
        .isEqualTo("failed: java.lang.IllegalStateException: subscriber of orders failed");
  }

  @Test
  void not_live_while_a_lock_store_call_has_been_in_progress_longer_than_the_bound()
      throws Exception {
    worker.state = WorkerStatus.State.RUNNING;
    CountDownLatch answer = new CountDownLatch(1);
    InMemoryLockBackend memory = new InMemoryLockBackend(time.clock());
    LockBackend hanging =
        calls.track(
            new LockBackend() {
              @Override
              public ClaimResult claim(ClaimRequest request) {
                try {
                  answer.await(); // a store that does not answer until the test says so
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
                return memory.claim(request);
              }

              @Override
              public boolean complete(Claim claim, Duration ttl) {
                return memory.complete(claim, ttl);
              }

              @Override
              public void release(Claim claim) {
                memory.release(claim);
              }

              @Override
              public boolean extend(Claim claim, Duration lease) {
                return memory.extend(claim, lease);
              }
            });
    Thread handler =
        new Thread(
            () -> hanging.claim("k", Duration.ofSeconds(30), "token"), "pubsub-worker-test-1");
    handler.start();
    await().atMost(Duration.ofSeconds(10)).until(() -> calls.inProgress() == 1);

    time.advance(Duration.ofSeconds(60));
    assertThat(health.liveness().ok()).as("exactly stuck-after old is not stuck yet").isTrue();
    time.advance(Duration.ofMillis(100));
    assertThat(health.liveness().ok()).isFalse();
    assertThat(health.liveness().text())
        .isEqualTo(
            "stuck in the lock store: a claim call on thread pubsub-worker-test-1 has been running"
                + " for 60.1s (stuck after 60.0s); 1 lock-store call(s) in progress");

    answer.countDown();
    handler.join(10_000);
    assertThat(calls.inProgress()).isZero();
    assertThat(health.liveness()).isEqualTo(new Health.Verdict(true, "alive"));
  }

  @Test
  void the_handler_check_is_off_by_default_and_fails_liveness_above_its_bound_when_on() {
    worker.state = WorkerStatus.State.RUNNING;
    worker.running = 5;
    worker.oldest =
        new RunningHandler("orders", "handler-orders-3", Duration.ofMinutes(90).plusMillis(50));
    assertThat(health.liveness()).as("off by default").isEqualTo(new Health.Verdict(true, "alive"));

    Health watching =
        new Health(
            worker,
            store,
            Duration.ofSeconds(30),
            time.clock(),
            calls,
            Duration.ofSeconds(60),
            Duration.ofMinutes(15));
    worker.oldest = new RunningHandler("orders", "handler-orders-3", Duration.ofMinutes(15));
    assertThat(watching.liveness().ok()).as("exactly the bound is not stuck yet").isTrue();
    worker.oldest =
        new RunningHandler("orders", "handler-orders-3", Duration.ofMinutes(15).plusMillis(100));
    assertThat(watching.liveness())
        .isEqualTo(
            new Health.Verdict(
                false,
                "stuck in a handler: a delivery of subscription orders on thread"
                    + " handler-orders-3 has been running for 900.1s (stuck after 900.0s); 5"
                    + " handler(s) running"));
    assertThat(watching.readiness().text()).doesNotContain("handler");
    worker.oldest = null;
    assertThat(watching.liveness().ok()).isTrue();
  }

  @Test
  void an_older_answer_never_replaces_a_newer_one() {
    store.answered();
    var first = store.lastAnswer().orElseThrow();
    time.advance(Duration.ofSeconds(5));
    store.answered();
    assertThat(store.lastAnswer()).contains(first.plusSeconds(5));
  }

  private static final class FakeWorker implements WorkerStatus {
    volatile State state = State.NOT_STARTED;
    volatile Throwable failure;
    volatile RunningHandler oldest;
    volatile int running;

    @Override
    public Optional<RunningHandler> oldestHandler() {
      return Optional.ofNullable(oldest);
    }

    @Override
    public int handlersRunning() {
      return running;
    }

    @Override
    public State state() {
      return state;
    }

    @Override
    public Optional<Throwable> failure() {
      return Optional.ofNullable(failure);
    }
  }
}
