package dev.pubsubworker.pubsub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.google.cloud.pubsub.v1.AckResponse;
import com.google.pubsub.v1.PubsubMessage;
import dev.pubsubworker.backend.memory.InMemoryLockBackend;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.testkit.ManualTime;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The receiver's builder, its stop (abandoning a running handler: claim released, thread
 * interrupted, nacked), what it reports about running handlers, and that listeners cannot change
 * how a delivery is settled.
 */
class GuardedReceiverTest {

  private final ManualTime time = new ManualTime();
  private final InMemoryLockBackend store = new InMemoryLockBackend(time.clock());
  private final IdempotencyGuard guard =
      IdempotencyGuard.newBuilder(store).clock(time.clock()).heartbeat(false).build();
  private final Replies replies = new Replies();
  private final List<Outcome> outcomes = new CopyOnWriteArrayList<>();
  private final ReceiverListener recorder =
      new ReceiverListener() {
        @Override
        public void settled(String subscription, Outcome outcome, Duration handlerTime) {
          outcomes.add(outcome);
        }
      };

  @AfterEach
  void closeGuard() {
    guard.close();
  }

  @Test
  void a_guarding_mode_needs_a_guard_and_a_key_and_setters_refuse_nonsense() {
    assertThatThrownBy(() -> GuardedReceiver.newBuilder("orders", (m, c) -> {}).build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("guard is not set: mode LOCK");
    assertThatThrownBy(
            () -> GuardedReceiver.newBuilder("orders", (m, c) -> {}).guard(guard).build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("key is not set");
    assertThatThrownBy(() -> GuardedReceiver.newBuilder("", (m, c) -> {}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("subscription must not be empty");
    assertThatThrownBy(
            () ->
                GuardedReceiver.newBuilder("orders", (m, c) -> {})
                    .inProgressMaxWait(Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("inProgressMaxWait must be zero or positive, but was PT-1S");
    assertThatThrownBy(() -> MessageKey.attribute("id").withNamespace("a:b"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("without ':'");
    // Unguarded needs neither, and runs every delivery.
    GuardedReceiver unguarded =
        GuardedReceiver.newBuilder("orders", (m, c) -> {})
            .mode(GuardMode.NONE)
            .listener(recorder)
            .build();
    deliver(unguarded, "m-1");
    deliver(unguarded, "m-2");
    assertThat(outcomes).containsExactly(Outcome.UNGUARDED, Outcome.UNGUARDED);
    unguarded.close();
  }

  @Test
  void an_unkeyed_message_runs_unguarded_when_allowed() {
    GuardedReceiver receiver =
        receiver(
            GuardedReceiver.newBuilder("orders", (m, c) -> assertThat(c.key()).isEmpty())
                .allowUnguarded(true));
    receiver
        .asMessageReceiver()
        .receiveMessage(Replies.message("m-1", "other", "x"), replies.consumer("m-1"));
    assertThat(outcomes).containsExactly(Outcome.UNGUARDED);
    assertThat(replies.byMessage).containsEntry("m-1", "ack");
  }

  @Test
  void the_handler_sees_its_key_and_fencing_token() {
    List<String> seen = new CopyOnWriteArrayList<>();
    GuardedReceiver receiver =
        receiver(
            GuardedReceiver.newBuilder(
                "orders",
                (m, c) -> seen.add(c.key().orElseThrow() + "@" + c.fencingToken().getAsLong())));
    deliver(receiver, "m-1");
    assertThat(seen).containsExactly("orders:po-1@1");
  }

  @Test
  void at_the_grace_a_running_handler_is_abandoned_its_claim_released_and_its_message_nacked()
      throws Exception {
    CountDownLatch running = new CountDownLatch(1);
    AtomicBoolean interrupted = new AtomicBoolean();
    GuardedReceiver receiver =
        receiver(
            GuardedReceiver.newBuilder(
                "orders",
                (m, c) -> {
                  running.countDown();
                  try {
                    Thread.sleep(60_000); // stands for work that ignores the grace
                  } catch (InterruptedException e) {
                    interrupted.set(true);
                    throw e;
                  }
                }));
    CompletableFuture<Void> delivery = CompletableFuture.runAsync(() -> deliver(receiver, "m-1"));
    assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(receiver.running()).isEqualTo(1);
    assertThat(receiver.oldestRunningSince()).contains(time.now());
    time.advance(Duration.ofSeconds(7));
    assertThat(receiver.oldestRunningSince()).contains(time.now().minusSeconds(7));

    assertThat(receiver.beginStop()).isEqualTo(1);
    assertThat(receiver.awaitIdle(Duration.ofMillis(50))).isFalse();
    GuardedReceiver.Abandoned abandoned = receiver.abandonRunning(Duration.ofSeconds(5));
    assertThat(abandoned).isEqualTo(new GuardedReceiver.Abandoned(1, 1));
    assertThat(replies.byMessage).containsExactly(Map.entry("m-1", "nack"));
    delivery.get(10, TimeUnit.SECONDS);
    assertThat(interrupted).isTrue();
    assertThat(outcomes).containsExactly(Outcome.ABANDONED);
    assertThat(receiver.running()).isZero();
    assertThat(receiver.oldestRunningSince()).isEmpty();
    // Released: the key is reclaimable at once, well inside the abandoned claim's lease.
    assertThat(store.claim(ClaimRequest.of("orders:po-1", Duration.ofSeconds(30), "next")))
        .isInstanceOf(ClaimResult.Won.class);
  }

  @Test
  void a_release_that_hangs_in_the_store_holds_the_stop_no_longer_than_its_budget()
      throws Exception {
    CountDownLatch releasing = new CountDownLatch(1);
    CountDownLatch forever = new CountDownLatch(1);
    LockBackend hangingRelease =
        new LockBackend() {
          @Override
          public ClaimResult claim(ClaimRequest request) {
            return store.claim(request);
          }

          @Override
          public boolean complete(Claim claim, Duration ttl) {
            return store.complete(claim, ttl);
          }

          @Override
          public void release(Claim claim) {
            releasing.countDown();
            try {
              forever.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }

          @Override
          public boolean extend(Claim claim, Duration lease) {
            return store.extend(claim, lease);
          }
        };
    IdempotencyGuard hanging =
        IdempotencyGuard.newBuilder(hangingRelease).clock(time.clock()).heartbeat(false).build();
    CountDownLatch running = new CountDownLatch(1);
    GuardedReceiver receiver =
        GuardedReceiver.newBuilder(
                "orders",
                (m, c) -> {
                  running.countDown();
                  new CountDownLatch(1).await(); // until interrupted
                })
            .guard(hanging)
            .key(MessageKey.attribute("id").withNamespace("orders"))
            .clock(time.clock())
            .timer(time.scheduler())
            .handlerExecutor(Runnable::run)
            .listener(recorder)
            .build();
    CompletableFuture<Void> delivery = CompletableFuture.runAsync(() -> deliver(receiver, "m-1"));
    try {
      assertThat(running.await(10, TimeUnit.SECONDS)).isTrue();
      receiver.beginStop();
      GuardedReceiver.Abandoned abandoned = receiver.abandonRunning(Duration.ofMillis(200));
      assertThat(releasing.getCount()).as("the release was tried").isZero();
      assertThat(abandoned).isEqualTo(new GuardedReceiver.Abandoned(1, 0));
      assertThat(replies.byMessage).containsExactly(Map.entry("m-1", "nack"));
      delivery.get(10, TimeUnit.SECONDS);
      assertThat(outcomes).containsExactly(Outcome.ABANDONED);
    } finally {
      forever.countDown();
      hanging.close();
    }
  }

  @Test
  void a_listener_that_throws_changes_nothing() {
    GuardedReceiver receiver =
        receiver(
            GuardedReceiver.newBuilder("orders", (m, c) -> {})
                .listener(
                    new ReceiverListener() {
                      @Override
                      public void received(String subscription) {
                        throw new IllegalStateException("broken listener");
                      }

                      @Override
                      public DeliveryObserver deliveryStarted(
                          String subscription, PubsubMessage message) {
                        return new DeliveryObserver() {
                          @Override
                          public void settled(Outcome outcome) {
                            throw new IllegalStateException("broken observer");
                          }
                        };
                      }
                    }));
    deliver(receiver, "m-1");
    assertThat(replies.byMessage).containsEntry("m-1", "ack");
    assertThat(outcomes).containsExactly(Outcome.PROCESSED);
  }

  @Test
  void a_refused_exactly_once_ack_is_reported_and_logged() {
    Logger logger = (Logger) LoggerFactory.getLogger(Failures.class);
    ListAppender<ILoggingEvent> log = new ListAppender<>();
    log.start();
    logger.addAppender(log);
    List<AckResponse> responses = new CopyOnWriteArrayList<>();
    try {
      GuardedReceiver receiver =
          receiver(
              GuardedReceiver.newBuilder("orders", (m, c) -> {})
                  .listener(
                      new ReceiverListener() {
                        @Override
                        public void ackResponse(String subscription, AckResponse response) {
                          responses.add(response);
                        }
                      }));
      receiver.receiveMessage(
          Replies.message("m-1", "id", "po-1"),
          replies.withResponse("m-1", AckResponse.PERMISSION_DENIED));
    } finally {
      logger.detachAppender(log);
    }
    assertThat(responses).containsExactly(AckResponse.PERMISSION_DENIED);
    assertThat(log.list)
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.getLevel()).isEqualTo(Level.WARN);
              assertThat(e.getFormattedMessage())
                  .startsWith(
                      "ack of message m-1 on subscription orders returned PERMISSION_DENIED");
            });
  }

  @Test
  void close_nacks_waiting_deliveries_and_stops_the_threads_it_made() {
    assertThat(store.claim(ClaimRequest.of("orders:po-1", Duration.ofSeconds(30), "holder")))
        .isInstanceOf(ClaimResult.Won.class);
    GuardedReceiver receiver =
        GuardedReceiver.newBuilder("orders", (m, c) -> {})
            .guard(guard)
            .key(MessageKey.attribute("id").withNamespace("orders"))
            .clock(time.clock())
            .listener(recorder)
            .build();
    deliver(receiver, "m-1");
    assertThat(receiver.waiting()).isEqualTo(1);
    receiver.close();
    // A retry already running when close came is refused by the stopping receiver all the same.
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> replies.byMessage.equals(Map.of("m-1", "nack")));
    assertThat(outcomes).containsExactly(Outcome.REFUSED_AT_SHUTDOWN);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                Thread.getAllStackTraces().keySet().stream()
                    .noneMatch(t -> t.getName().startsWith("pubsub-worker-park-timer-orders")));
  }

  private GuardedReceiver receiver(GuardedReceiver.Builder b) {
    return b.guard(guard)
        .key(MessageKey.attribute("id").withNamespace("orders"))
        .clock(time.clock())
        .timer(time.scheduler())
        .handlerExecutor(Runnable::run)
        .listener(recorder)
        .build();
  }

  private void deliver(GuardedReceiver receiver, String id) {
    receiver
        .asMessageReceiver()
        .receiveMessage(Replies.message(id, "id", "po-1"), replies.consumer(id));
  }
}
