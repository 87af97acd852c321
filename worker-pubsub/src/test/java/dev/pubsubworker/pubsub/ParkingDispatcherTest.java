package dev.pubsubworker.pubsub;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.backend.memory.InMemoryLockBackend;
import dev.pubsubworker.core.CallOptions;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.GuardListener;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.testkit.ManualTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Parking and local lines in the receiver, on a manual clock and timer: a held key parks the
 * delivery (no reply, no thread) and its claim is retried on the backoff, on the handler executor,
 * never past the holder's lease; a delivery of a key already running here queues behind it; the
 * wait ends in processed, duplicate, timeout, or a nack at shutdown.
 */
class ParkingDispatcherTest {

  private static final String KEY = "orders:po-1";

  private final ManualTime time = new ManualTime();
  private final InMemoryLockBackend store = new InMemoryLockBackend(time.clock());
  private final List<Runnable> handed = new ArrayList<>();
  private final Replies replies = new Replies();
  private final List<Outcome> outcomes = new CopyOnWriteArrayList<>();
  private final List<Duration> waits = new CopyOnWriteArrayList<>();
  private final AtomicInteger parked = new AtomicInteger();
  private final AtomicInteger handled = new AtomicInteger();
  private final List<Instant> contended = new CopyOnWriteArrayList<>();
  private final List<Boolean> claims = new CopyOnWriteArrayList<>();
  private final Logger logger = (Logger) LoggerFactory.getLogger(KeyLines.class);
  private final ListAppender<ILoggingEvent> log = new ListAppender<>();
  private MessageHandler handler = (m, c) -> handled.incrementAndGet();

  @BeforeEach
  void capture() {
    log.start();
    logger.addAppender(log);
  }

  @AfterEach
  void release() {
    logger.detachAppender(log);
  }

  @Test
  void a_held_key_parks_then_runs_when_the_holders_lease_lapses() {
    Claim holder = hold(Duration.ofSeconds(3));
    GuardedReceiver d = receiver(GuardMode.LOCK, b -> b);
    dispatch(d, "m-1");
    assertThat(replies.byMessage).isEmpty();
    assertThat(parked).hasValue(1);
    assertThat(d.waiting()).isEqualTo(1);

    // 200 ms, 400, 800, then 1600 (cut to the lease's end): each retry is handed to a handler
    // thread by the timer, not run on it.
    long[] steps = {200, 400, 800, 1600};
    for (long step : steps) {
      time.advance(Duration.ofMillis(step - 1));
      assertThat(handed).as("not before its delay").isEmpty();
      time.advance(Duration.ofMillis(1));
      assertThat(handed).hasSize(1);
      runHanded();
    }
    // The first claim and the first three retries found the key held; the fourth, at the lease's
    // end, took it over.
    assertThat(contended).hasSize(4);
    assertThat(claims).containsExactly(true);
    assertThat(handled).hasValue(1);
    assertThat(replies.byMessage).containsExactly(Map.entry("m-1", "ack"));
    assertThat(outcomes).containsExactly(Outcome.PARKED_THEN_PROCESSED);
    assertThat(waits).containsExactly(Duration.ofSeconds(3));
    assertThat(parked).hasValue(0);
    assertThat(store.inspect(holder.key()).orElseThrow().fence()).isEqualTo(2);
    assertThat(infoLines())
        .as("one INFO line for the parked delivery, its max wait written as the config writes it")
        .singleElement()
        .extracting(ILoggingEvent::getFormattedMessage)
        .asString()
        .endsWith("retried until the lease ends, for at most 2m");
    assertThat(warnings()).isEmpty();
  }

  @Test
  void a_key_completed_by_its_holder_meanwhile_is_acked_as_a_duplicate() {
    Claim holder = hold(Duration.ofSeconds(30));
    GuardedReceiver d = receiver(GuardMode.LOCK, b -> b);
    dispatch(d, "m-1");
    time.advance(Duration.ofMillis(200));
    runHanded();
    assertThat(replies.byMessage).isEmpty();
    assertThat(store.complete(holder, Duration.ofHours(1))).isTrue();
    time.advance(Duration.ofMillis(400));
    runHanded();
    assertThat(replies.byMessage).containsExactly(Map.entry("m-1", "ack"));
    assertThat(outcomes).containsExactly(Outcome.PARKED_THEN_DUPLICATE);
    assertThat(handled).hasValue(0);
  }

  @Test
  void a_holder_that_keeps_extending_gets_the_waiter_nacked_after_the_max_wait() {
    Claim holder = hold(Duration.ofSeconds(3));
    GuardedReceiver d = receiver(GuardMode.LOCK, b -> b.inProgressMaxWait(Duration.ofSeconds(10)));
    dispatch(d, "m-1");
    for (int i = 0; i < 100 && replies.byMessage.isEmpty(); i++) {
      assertThat(store.extend(holder, Duration.ofSeconds(3))).isTrue();
      time.advance(Duration.ofMillis(500));
      runHanded();
    }
    assertThat(replies.byMessage).containsExactly(Map.entry("m-1", "nack"));
    assertThat(outcomes).containsExactly(Outcome.PARKED_TIMEOUT);
    assertThat(waits).containsExactly(Duration.ofSeconds(10));
    assertThat(handled).hasValue(0);
    assertThat(infoLines()).hasSize(1);
    assertThat(warnings())
        .singleElement()
        .extracting(ILoggingEvent::getFormattedMessage)
        .asString()
        .startsWith("message m-1 waited 10s (in-progress-max-wait) for key orders:po-1");
  }

  @Test
  void the_default_max_wait_nacks_a_held_key_two_minutes_after_it_began_to_wait() {
    Claim holder = hold(Duration.ofSeconds(3));
    GuardedReceiver d = receiver(GuardMode.LOCK, b -> b);
    dispatch(d, "m-1");
    long waited = 0;
    while (replies.byMessage.isEmpty() && waited < 10 * 60_000) {
      assertThat(store.extend(holder, Duration.ofSeconds(3))).isTrue();
      time.advance(Duration.ofMillis(100));
      waited += 100;
      runHanded();
    }
    assertThat(replies.byMessage).containsExactly(Map.entry("m-1", "nack"));
    assertThat(waits).containsExactly(GuardedReceiver.DEFAULT_IN_PROGRESS_MAX_WAIT);
    assertThat(Duration.ofMillis(waited)).isEqualTo(GuardedReceiver.DEFAULT_IN_PROGRESS_MAX_WAIT);
  }

  @Test
  void zero_max_wait_nacks_a_held_key_at_once_as_before() {
    hold(Duration.ofSeconds(30));
    GuardedReceiver d = receiver(GuardMode.LOCK, b -> b.inProgressMaxWait(Duration.ZERO));
    dispatch(d, "m-1");
    assertThat(replies.byMessage).containsExactly(Map.entry("m-1", "nack"));
    assertThat(outcomes).containsExactly(Outcome.IN_PROGRESS);
    assertThat(time.pendingTasks()).isZero();
  }

  @Test
  void deliveries_of_a_running_key_queue_behind_it_in_order_without_store_calls() {
    List<String> ran = new CopyOnWriteArrayList<>();
    GuardedReceiver[] d = new GuardedReceiver[1];
    handler =
        (m, c) -> {
          ran.add(m.messageId());
          if (m.messageId().equals("m-1")) {
            // Two more deliveries of the key arrive while it runs.
            dispatch(d[0], "m-2");
            dispatch(d[0], "m-3");
            assertThat(d[0].waiting()).isEqualTo(2);
          }
        };
    d[0] = receiver(GuardMode.MUTEX, b -> b);
    dispatch(d[0], "m-1");
    assertThat(replies.byMessage).containsExactly(Map.entry("m-1", "ack"));
    assertThat(handed).as("the next one goes to a handler thread").hasSize(1);
    runHanded();
    assertThat(ran).containsExactly("m-1", "m-2", "m-3");
    assertThat(replies.byMessage)
        .containsEntry("m-2", "ack")
        .containsEntry("m-3", "ack")
        .hasSize(3);
    assertThat(outcomes)
        .containsExactly(
            Outcome.PROCESSED, Outcome.PARKED_THEN_PROCESSED, Outcome.PARKED_THEN_PROCESSED);
    assertThat(contended).as("the queued ones never found the key held in the store").isEmpty();
    assertThat(parked).hasValue(0);
    assertThat(time.pendingTasks()).as("the queued deadlines were cancelled").isZero();
  }

  @Test
  void lock_duplicates_in_one_process_wait_locally_and_are_acked_as_duplicates() {
    GuardedReceiver[] d = new GuardedReceiver[1];
    handler =
        (m, c) -> {
          handled.incrementAndGet();
          dispatch(d[0], "m-2");
        };
    d[0] = receiver(GuardMode.LOCK, b -> b);
    dispatch(d[0], "m-1");
    runHanded();
    assertThat(handled).hasValue(1);
    assertThat(outcomes).containsExactly(Outcome.PROCESSED, Outcome.PARKED_THEN_DUPLICATE);
  }

  @Test
  void a_queued_delivery_times_out_on_its_own_deadline() {
    GuardedReceiver[] d = new GuardedReceiver[1];
    handler =
        (m, c) -> {
          if (m.messageId().equals("m-1")) {
            dispatch(d[0], "m-2");
            time.advance(Duration.ofSeconds(2)); // m-1 runs past m-2's in-progress-max-wait
          }
        };
    d[0] = receiver(GuardMode.MUTEX, b -> b.inProgressMaxWait(Duration.ofSeconds(2)));
    dispatch(d[0], "m-1");
    assertThat(replies.byMessage).containsEntry("m-2", "nack").containsEntry("m-1", "ack");
    assertThat(outcomes).containsExactly(Outcome.PARKED_TIMEOUT, Outcome.PROCESSED);
    assertThat(handed).isEmpty();
  }

  @Test
  void a_stop_nacks_parked_and_queued_deliveries_and_they_never_run() {
    hold(Duration.ofSeconds(30));
    GuardedReceiver d = receiver(GuardMode.LOCK, b -> b);
    dispatch(d, "m-1"); // parked: the key is held elsewhere
    dispatch(d, "m-2"); // queued behind m-1
    time.advance(Duration.ofMillis(200)); // m-1's retry handed over, not yet run
    assertThat(d.waiting()).isEqualTo(2);

    assertThat(d.beginStop()).as("none was running").isZero();
    assertThat(d.nackWaiting()).isEqualTo(2);
    assertThat(replies.byMessage).containsEntry("m-1", "nack").containsEntry("m-2", "nack");
    assertThat(outcomes).containsOnly(Outcome.REFUSED_AT_SHUTDOWN).hasSize(2);
    runHanded();
    time.advance(Duration.ofMinutes(5));
    runHanded();
    assertThat(handled).hasValue(0);
    assertThat(outcomes).hasSize(2);
    assertThat(parked).hasValue(0);
    // A delivery arriving later is not parked either: the stopping receiver refuses it.
    dispatch(d, "m-3");
    assertThat(replies.byMessage).containsEntry("m-3", "nack");
    assertThat(outcomes).last().isEqualTo(Outcome.REFUSED_AT_SHUTDOWN);
    assertThat(d.refusedSinceStop()).isEqualTo(1);
  }

  private Claim hold(Duration lease) {
    ClaimResult r = store.claim(ClaimRequest.of(KEY, lease, "crashed-holder"));
    assertThat(r).isInstanceOf(ClaimResult.Won.class);
    return ((ClaimResult.Won) r).claim();
  }

  private void runHanded() {
    while (!handed.isEmpty()) {
      handed.remove(0).run();
    }
  }

  private void dispatch(GuardedReceiver receiver, String id) {
    receiver
        .asMessageReceiver()
        .receiveMessage(Replies.message(id, "id", "po-1"), replies.consumer(id));
  }

  private GuardedReceiver receiver(GuardMode mode, UnaryOperator<GuardedReceiver.Builder> more) {
    ReceiverListener listener =
        new ReceiverListener() {
          @Override
          public void settled(String subscription, Outcome outcome, Duration handlerTime) {
            outcomes.add(outcome);
          }

          @Override
          public void parked(String subscription, int delta) {
            parked.addAndGet(delta);
          }

          @Override
          public void parkedSettled(String subscription, Outcome outcome, Duration waited) {
            waits.add(waited);
          }
        };
    IdempotencyGuard guard =
        IdempotencyGuard.newBuilder(store)
            .clock(time.clock())
            .heartbeatScheduler(time.scheduler())
            .claimRetries(0)
            .listener(
                new GuardListener() {
                  @Override
                  public void contended(String key, Instant leaseExpiry) {
                    contended.add(leaseExpiry == null ? Instant.EPOCH : leaseExpiry);
                  }

                  @Override
                  public void claimed(String key, long fence, boolean reclaim) {
                    claims.add(reclaim);
                  }
                })
            .build();
    return more.apply(
            GuardedReceiver.newBuilder("orders", (m, c) -> handler.handle(m, c))
                .guard(guard)
                .mode(mode)
                .key(MessageKey.attribute("id").withNamespace("orders"))
                .callOptions(CallOptions.defaults().lease(Duration.ofSeconds(3)).heartbeat(false))
                .timer(time.scheduler())
                .handlerExecutor(handed::add)
                .clock(time.clock())
                .random(() -> 0)
                .messageOrdering(true)
                .listener(listener))
        .build();
  }

  private List<ILoggingEvent> warnings() {
    return log.list.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.WARN)).toList();
  }

  private List<ILoggingEvent> infoLines() {
    return log.list.stream().filter(e -> e.getLevel() == Level.INFO).toList();
  }
}
