package dev.pubsubworker.pubsub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.pubsubworker.backend.memory.InMemoryLockBackend;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.core.LockState;
import dev.pubsubworker.testkit.ManualTime;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * On a store whose complete is asynchronous, the handler's thread moves on once DONE is on its way,
 * and the store's answer settles the delivery on the thread that brings it: acked only once DONE is
 * written, still counted as running until then (a stop waits for it), and, if a stop abandons it
 * meanwhile, nacked by the stop with its claim kept (the work ran) and no thread interrupted.
 */
class AsyncCompleteReceiverTest {

  private final ManualTime time = new ManualTime();
  private final InMemoryLockBackend store = new InMemoryLockBackend(time.clock());
  private final LinkedBlockingQueue<Runnable> answers = new LinkedBlockingQueue<>();

  /** The in-memory store, its complete answered when the test says, on a thread of its own. */
  private final LockBackend async =
      new LockBackend() {
        @Override
        public ClaimResult claim(ClaimRequest request) {
          return store.claim(request);
        }

        @Override
        public boolean complete(Claim claim, Duration ttl) {
          throw new AssertionError("the receiver waits for no complete");
        }

        @Override
        public CompletionStage<Boolean> completeAsync(Claim claim, Duration ttl) {
          CompletableFuture<Boolean> f = new CompletableFuture<>();
          answers.add(() -> f.complete(store.complete(claim, ttl)));
          return f;
        }

        @Override
        public void release(Claim claim) {
          store.release(claim);
        }

        @Override
        public boolean extend(Claim claim, Duration lease) {
          return store.extend(claim, lease);
        }
      };

  private final IdempotencyGuard guard =
      IdempotencyGuard.newBuilder(async).clock(time.clock()).heartbeat(false).build();
  private final Replies replies = new Replies();
  private final List<Outcome> outcomes = new CopyOnWriteArrayList<>();
  private final List<String> settledOn = new CopyOnWriteArrayList<>();
  private final GuardedReceiver receiver =
      GuardedReceiver.newBuilder("orders", (m, c) -> {})
          .guard(guard)
          .key(MessageKey.attribute("id").withNamespace("orders"))
          .clock(time.clock())
          .timer(time.scheduler())
          .handlerExecutor(Runnable::run)
          .listener(
              new ReceiverListener() {
                @Override
                public void settled(String subscription, Outcome outcome, Duration handlerTime) {
                  outcomes.add(outcome);
                  settledOn.add(Thread.currentThread().getName());
                }
              })
          .build();

  @AfterEach
  void close() {
    receiver.close();
    guard.close();
  }

  private void deliver(String id) {
    deliver(id, "po-" + id);
  }

  private void deliver(String id, String key) {
    receiver
        .asMessageReceiver()
        .receiveMessage(Replies.message(id, "id", key), replies.consumer(id));
  }

  /** Answers the oldest complete in flight on a thread named {@code store-io}. */
  private void answer() throws InterruptedException {
    Runnable next = answers.poll(30, TimeUnit.SECONDS);
    assertThat(next).as("a complete in flight").isNotNull();
    Thread io = new Thread(next, "store-io");
    io.start();
    io.join(30_000);
  }

  @Test
  void the_store_s_answer_acks_the_delivery_on_its_own_thread() throws Exception {
    deliver("m-1");
    // The handler ran and this thread is back, the complete on its way: not acked yet.
    assertThat(replies.byMessage).isEmpty();
    assertThat(receiver.running()).isEqualTo(1);
    assertThat(receiver.oldestRunning().orElseThrow().thread()).isEqualTo(Running.AWAITING_STORE);

    answer();
    assertThat(replies.byMessage).containsExactly(Map.entry("m-1", "ack"));
    assertThat(outcomes).containsExactly(Outcome.PROCESSED);
    assertThat(settledOn).containsExactly("store-io");
    assertThat(receiver.running()).isZero();
    assertThat(store.inspect("orders:po-m-1").orElseThrow().state()).isEqualTo(LockState.DONE);

    // A redelivery is a duplicate, acked at once: no complete.
    deliver("m-1-again", "po-m-1");
    assertThat(replies.byMessage).containsEntry("m-1-again", "ack");
    assertThat(outcomes).containsExactly(Outcome.PROCESSED, Outcome.DUPLICATE);
    assertThat(answers).isEmpty();
  }

  @Test
  void a_stop_waits_for_a_complete_on_its_way() throws Exception {
    deliver("m-1");
    assertThat(receiver.beginStop()).isEqualTo(1);
    assertThat(receiver.awaitIdle(Duration.ofMillis(50))).isFalse();
    AtomicReference<Boolean> idle = new AtomicReference<>();
    Thread stopper =
        new Thread(
            () -> {
              try {
                idle.set(receiver.awaitIdle(Duration.ofSeconds(30)));
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
    stopper.start();
    answer();
    stopper.join(30_000);
    assertThat(idle.get()).isTrue();
    assertThat(replies.byMessage).containsExactly(Map.entry("m-1", "ack"));
    assertThat(outcomes).containsExactly(Outcome.PROCESSED);
  }

  @Test
  void abandoned_while_completing_it_is_nacked_once_its_claim_kept_and_no_thread_interrupted()
      throws Exception {
    deliver("m-1");
    assertThat(receiver.beginStop()).isEqualTo(1);
    GuardedReceiver.Abandoned abandoned = receiver.abandonRunning(Duration.ofSeconds(5));
    // The work ran: its claim is not released (the complete may still write DONE).
    assertThat(abandoned).isEqualTo(new GuardedReceiver.Abandoned(1, 0));
    assertThat(replies.byMessage).containsExactly(Map.entry("m-1", "nack"));
    assertThat(Thread.interrupted()).as("this thread ran the handler").isFalse();

    answer();
    await().atMost(Duration.ofSeconds(10)).until(() -> receiver.running() == 0);
    // Settled once (Replies fails a second reply); DONE written all the same.
    assertThat(replies.byMessage).containsExactly(Map.entry("m-1", "nack"));
    assertThat(outcomes).containsExactly(Outcome.ABANDONED);
    assertThat(store.inspect("orders:po-m-1").orElseThrow().state()).isEqualTo(LockState.DONE);
  }
}
