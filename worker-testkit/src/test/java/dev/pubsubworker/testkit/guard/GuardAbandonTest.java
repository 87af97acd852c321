package dev.pubsubworker.testkit.guard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.pubsubworker.core.Completion;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.LeaseLostException;
import dev.pubsubworker.core.LockRecord;
import dev.pubsubworker.core.LockResult;
import dev.pubsubworker.core.LockState;
import dev.pubsubworker.core.WorkContext;
import dev.pubsubworker.testkit.ManualTime;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link IdempotencyGuard#abandon}: a worker whose shutdown grace ran out gives up the claim of
 * work still running, from another thread. On the in-memory store with manual time.
 */
class GuardAbandonTest {

  private static final Duration LEASE = Duration.ofSeconds(30);

  private ManualTime time;
  private ScriptedBackend backend;
  private RecordingListener listener;
  private IdempotencyGuard guard;
  private ExecutorService pool;

  @BeforeEach
  void setUp() {
    time = new ManualTime();
    backend = new ScriptedBackend(time.clock());
    listener = new RecordingListener();
    guard =
        IdempotencyGuard.newBuilder(backend)
            .lease(LEASE)
            .ttl(Duration.ofHours(1))
            .clock(time.clock())
            .heartbeatScheduler(time.scheduler())
            .claimRetryBackoff(Duration.ZERO)
            .listener(listener)
            .build();
    pool = Executors.newCachedThreadPool();
  }

  @AfterEach
  void tearDown() {
    guard.close();
    pool.shutdownNow();
  }

  /** Runs {@code lock("k")} on another thread; the work blocks until {@code finish}, then acts. */
  private Future<LockResult<String>> running(
      CountDownLatch finish, AtomicReference<WorkContext> context, boolean failAtEnd) {
    Future<LockResult<String>> f =
        pool.submit(
            () ->
                guard.lock(
                    "k",
                    ctx -> {
                      context.set(ctx);
                      assertThat(finish.await(30, TimeUnit.SECONDS)).isTrue();
                      if (failAtEnd) {
                        throw new IllegalStateException("work failed after abandon");
                      }
                      return "done";
                    }));
    await().atMost(Duration.ofSeconds(10)).until(() -> context.get() != null);
    return f;
  }

  private LockRecord record() {
    Optional<LockRecord> r = backend.inspect("k");
    assertThat(r).isPresent();
    return r.get();
  }

  @Test
  void abandon_releases_the_running_claim_and_the_work_can_no_longer_complete() throws Exception {
    CountDownLatch finish = new CountDownLatch(1);
    AtomicReference<WorkContext> context = new AtomicReference<>();
    Future<LockResult<String>> result = running(finish, context, false);

    assertThat(guard.abandon(context.get())).isTrue();

    LockRecord released = record();
    assertThat(released.state()).isEqualTo(LockState.CLAIMED);
    assertThat(released.fence()).as("release raises the fence").isEqualTo(2);
    assertThat(released.claimToken()).isNull();
    assertThat(released.reclaimable()).as("reclaimable at once, not after the lease").isTrue();
    assertThat(context.get().isLeaseLost()).isTrue();
    assertThatThrownBy(() -> context.get().checkLease()).isInstanceOf(LeaseLostException.class);

    // The heartbeat stopped: a lease's worth of time brings no extension.
    int extensions = (int) listener.events.stream().filter(e -> e.startsWith("extended")).count();
    time.advance(LEASE);
    assertThat(listener.events.stream().filter(e -> e.startsWith("extended")).count())
        .isEqualTo(extensions);

    // The work ignores it and returns: its DONE is refused (fenced out), never written.
    finish.countDown();
    LockResult<String> r = result.get(10, TimeUnit.SECONDS);
    assertThat(r).isEqualTo(new LockResult.Executed<>("done", 1, Completion.FENCED_OUT));
    assertThat(record().state()).isEqualTo(LockState.CLAIMED);
    assertThat(listener.without("call:"))
        .containsExactly("claimed:k:1", "released:k:1:failure", "fencedOut:k:1");
  }

  @Test
  void abandoned_work_that_then_fails_is_not_released_a_second_time() throws Exception {
    CountDownLatch finish = new CountDownLatch(1);
    AtomicReference<WorkContext> context = new AtomicReference<>();
    Future<LockResult<String>> result = running(finish, context, true);

    assertThat(guard.abandon(context.get())).isTrue();
    assertThat(guard.abandon(context.get())).as("a second abandon does nothing").isFalse();
    finish.countDown();

    assertThatThrownBy(() -> result.get(10, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(IllegalStateException.class);
    assertThat(listener.events.stream().filter(e -> e.startsWith("released"))).hasSize(1);
    assertThat(record().fence()).isEqualTo(2);
  }

  @Test
  void abandon_after_the_work_ended_changes_nothing() throws Exception {
    CountDownLatch finish = new CountDownLatch(1);
    AtomicReference<WorkContext> context = new AtomicReference<>();
    Future<LockResult<String>> result = running(finish, context, false);
    finish.countDown();
    assertThat(result.get(10, TimeUnit.SECONDS).executed()).isTrue();

    assertThat(guard.abandon(context.get())).isFalse();
    assertThat(record().state()).isEqualTo(LockState.DONE);
    assertThat(record().fence()).isEqualTo(1);
  }

  @Test
  void abandon_refuses_a_context_the_guard_did_not_create() {
    WorkContext foreign =
        new WorkContext() {
          @Override
          public String key() {
            return "k";
          }

          @Override
          public long fencingToken() {
            return 1;
          }

          @Override
          public boolean isLeaseLost() {
            return false;
          }

          @Override
          public Instant leaseExpiry() {
            return Instant.EPOCH;
          }

          @Override
          public void checkLease() {}

          @Override
          public boolean isReclaim() {
            return false;
          }

          @Override
          public Instant claimedAt() {
            return Instant.EPOCH;
          }

          @Override
          public <R> Optional<R> resource(Class<R> type) {
            return Optional.empty();
          }
        };
    assertThatThrownBy(() -> guard.abandon(foreign))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("abandon needs a WorkContext this guard created");
  }
}
