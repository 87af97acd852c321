package dev.pubsubworker.runtime.pubsub;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.typesafe.config.ConfigFactory;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.backend.memory.InMemoryLockBackend;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.runtime.config.SubscriptionConfig;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.testkit.ManualTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Parking and local lines in the dispatcher, on a manual clock and timer: a held key parks the
 * delivery (no reply, no thread) and its claim is retried on the backoff, on the handler executor,
 * never past the holder's lease; a delivery of a key already running here queues behind it; the
 * wait ends in processed, duplicate, timeout, or a nack at shutdown.
 */
class ParkingDispatcherTest {

  private static final String KEY = "orders:po-1";

  private final ManualTime time = new ManualTime();
  private final InMemoryLockBackend store = new InMemoryLockBackend(time.clock());
  private final List<Runnable> handed = new ArrayList<>();
  private final Map<String, String> replies = new ConcurrentHashMap<>();
  private final List<Outcome> outcomes = new CopyOnWriteArrayList<>();
  private final List<Duration> waits = new CopyOnWriteArrayList<>();
  private final AtomicInteger parked = new AtomicInteger();
  private final AtomicInteger handled = new AtomicInteger();
  private final Logger logger = (Logger) LoggerFactory.getLogger(GuardedDispatcher.class);
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
    GuardedDispatcher d = dispatcher("guard = lock");
    d.dispatch(message("m-1"), reply("m-1"));
    assertThat(replies).isEmpty();
    assertThat(parked).hasValue(1);
    assertThat(d.waiting()).isEqualTo(1);

    // 200 ms, 400, 800, then 1600 (cut to the lease's end): each retry is handed to a handler
    // thread by the timer, not run on it.
    int[] retries = {0};
    long[] steps = {200, 400, 800, 1600};
    for (long step : steps) {
      time.advance(Duration.ofMillis(step - 1));
      assertThat(handed).as("not before its delay").isEmpty();
      time.advance(Duration.ofMillis(1));
      assertThat(handed).hasSize(1);
      runHanded();
      retries[0]++;
    }
    assertThat(retries[0]).isEqualTo(4);
    assertThat(handled).hasValue(1);
    assertThat(replies).containsExactly(Map.entry("m-1", "ack"));
    assertThat(outcomes).containsExactly(Outcome.PARKED_THEN_PROCESSED);
    assertThat(waits).containsExactly(Duration.ofSeconds(3));
    assertThat(parked).hasValue(0);
    assertThat(store.inspect(holder.key()).orElseThrow().fence()).isEqualTo(2);
    assertThat(infoLines()).as("one INFO line for the parked delivery").hasSize(1);
    assertThat(warnings()).isEmpty();
  }

  @Test
  void a_key_completed_by_its_holder_meanwhile_is_acked_as_a_duplicate() {
    Claim holder = hold(Duration.ofSeconds(30));
    GuardedDispatcher d = dispatcher("guard = lock");
    d.dispatch(message("m-1"), reply("m-1"));
    time.advance(Duration.ofMillis(200));
    runHanded();
    assertThat(replies).isEmpty();
    assertThat(store.complete(holder, Duration.ofHours(1))).isTrue();
    time.advance(Duration.ofMillis(400));
    runHanded();
    assertThat(replies).containsExactly(Map.entry("m-1", "ack"));
    assertThat(outcomes).containsExactly(Outcome.PARKED_THEN_DUPLICATE);
    assertThat(handled).hasValue(0);
  }

  @Test
  void a_holder_that_keeps_extending_gets_the_waiter_nacked_after_the_max_wait() {
    Claim holder = hold(Duration.ofSeconds(3));
    GuardedDispatcher d = dispatcher("guard = lock\nin-progress-max-wait = 10s");
    d.dispatch(message("m-1"), reply("m-1"));
    for (int i = 0; i < 100 && replies.isEmpty(); i++) {
      assertThat(store.extend(holder, Duration.ofSeconds(3))).isTrue();
      time.advance(Duration.ofMillis(500));
      runHanded();
    }
    assertThat(replies).containsExactly(Map.entry("m-1", "nack"));
    assertThat(outcomes).containsExactly(Outcome.PARKED_TIMEOUT);
    assertThat(waits).containsExactly(Duration.ofSeconds(10));
    assertThat(handled).hasValue(0);
    assertThat(infoLines()).hasSize(1);
    assertThat(warnings())
        .singleElement()
        .extracting(ILoggingEvent::getFormattedMessage)
        .asString()
        .startsWith("message m-1 waited PT10S (in-progress-max-wait) for key orders:po-1");
  }

  @Test
  void zero_max_wait_nacks_a_held_key_at_once_as_before() {
    hold(Duration.ofSeconds(30));
    GuardedDispatcher d = dispatcher("guard = lock\nin-progress-max-wait = 0s");
    d.dispatch(message("m-1"), reply("m-1"));
    assertThat(replies).containsExactly(Map.entry("m-1", "nack"));
    assertThat(outcomes).containsExactly(Outcome.IN_PROGRESS);
    assertThat(time.pendingTasks()).isZero();
  }

  @Test
  void deliveries_of_a_running_key_queue_behind_it_in_order_without_store_calls() {
    List<String> ran = new CopyOnWriteArrayList<>();
    GuardedDispatcher[] d = new GuardedDispatcher[1];
    handler =
        (m, c) -> {
          ran.add(m.messageId());
          if (m.messageId().equals("m-1")) {
            // Two more deliveries of the key arrive while it runs.
            d[0].dispatch(message("m-2"), reply("m-2"));
            d[0].dispatch(message("m-3"), reply("m-3"));
            assertThat(d[0].waiting()).isEqualTo(2);
          }
        };
    d[0] = dispatcher("guard = mutex");
    d[0].dispatch(message("m-1"), reply("m-1"));
    assertThat(replies).containsExactly(Map.entry("m-1", "ack"));
    assertThat(handed).as("the next one goes to a handler thread").hasSize(1);
    runHanded();
    assertThat(ran).containsExactly("m-1", "m-2", "m-3");
    assertThat(replies).containsEntry("m-2", "ack").containsEntry("m-3", "ack").hasSize(3);
    assertThat(outcomes)
        .containsExactly(
            Outcome.PROCESSED, Outcome.PARKED_THEN_PROCESSED, Outcome.PARKED_THEN_PROCESSED);
    assertThat(parked).hasValue(0);
    assertThat(time.pendingTasks()).as("the queued deadlines were cancelled").isZero();
  }

  @Test
  void lock_duplicates_in_one_process_wait_locally_and_are_acked_as_duplicates() {
    GuardedDispatcher[] d = new GuardedDispatcher[1];
    handler =
        (m, c) -> {
          handled.incrementAndGet();
          d[0].dispatch(message("m-2"), reply("m-2"));
        };
    d[0] = dispatcher("guard = lock");
    d[0].dispatch(message("m-1"), reply("m-1"));
    runHanded();
    assertThat(handled).hasValue(1);
    assertThat(outcomes).containsExactly(Outcome.PROCESSED, Outcome.PARKED_THEN_DUPLICATE);
  }

  @Test
  void a_queued_delivery_times_out_on_its_own_deadline() {
    GuardedDispatcher[] d = new GuardedDispatcher[1];
    handler =
        (m, c) -> {
          if (m.messageId().equals("m-1")) {
            d[0].dispatch(message("m-2"), reply("m-2"));
            time.advance(Duration.ofSeconds(2)); // m-1 runs past m-2's in-progress-max-wait
          }
        };
    d[0] = dispatcher("guard = mutex\nin-progress-max-wait = 2s");
    d[0].dispatch(message("m-1"), reply("m-1"));
    assertThat(replies).containsEntry("m-2", "nack").containsEntry("m-1", "ack");
    assertThat(outcomes).containsExactly(Outcome.PARKED_TIMEOUT, Outcome.PROCESSED);
    assertThat(handed).isEmpty();
  }

  @Test
  void a_stop_nacks_parked_and_queued_deliveries_and_they_never_run() {
    hold(Duration.ofSeconds(30));
    GuardedDispatcher d = dispatcher("guard = lock");
    d.dispatch(message("m-1"), reply("m-1")); // parked: the key is held elsewhere
    d.dispatch(message("m-2"), reply("m-2")); // queued behind m-1
    time.advance(Duration.ofMillis(200)); // m-1's retry handed over, not yet run
    assertThat(d.waiting()).isEqualTo(2);

    stops.get(0).beginStop();
    assertThat(d.releaseWaiting()).isEqualTo(2);
    assertThat(replies).containsEntry("m-1", "nack").containsEntry("m-2", "nack");
    assertThat(outcomes).containsOnly(Outcome.REFUSED_AT_SHUTDOWN).hasSize(2);
    runHanded();
    time.advance(Duration.ofMinutes(5));
    runHanded();
    assertThat(handled).hasValue(0);
    assertThat(outcomes).hasSize(2);
    assertThat(parked).hasValue(0);
    // A delivery arriving later is not parked either: the stop's InFlight refuses it.
    d.dispatch(message("m-3"), reply("m-3"));
    assertThat(replies).containsEntry("m-3", "nack");
    assertThat(outcomes).last().isEqualTo(Outcome.REFUSED_AT_SHUTDOWN);
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

  private GuardedDispatcher dispatcher(String settings) {
    InFlight inFlight = new InFlight();
    GuardedDispatcher.Parking parking =
        new GuardedDispatcher.Parking(
            (task, delay) -> time.scheduler().schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS),
            handed::add,
            time.clock(),
            () -> 0);
    DispatchListener listener =
        new DispatchListener() {
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
    GuardedDispatcher d =
        new GuardedDispatcher(
            subscription(settings),
            (m, c) -> handler.handle(m, c),
            IdempotencyGuard.newBuilder(store)
                .clock(time.clock())
                .heartbeatScheduler(time.scheduler())
                .claimRetries(0)
                .build(),
            listener,
            inFlight,
            k -> k,
            new RepeatLimiter(GuardedDispatcher.REPEAT_INTERVAL, time.clock()),
            TerminalFailures.poisonOnly(),
            DeadLetters.none(
                "orders", new RepeatLimiter(GuardedDispatcher.REPEAT_INTERVAL, time.clock())),
            parking,
            true);
    stops.add(inFlight);
    return d;
  }

  private final List<InFlight> stops = new ArrayList<>();

  private List<ILoggingEvent> warnings() {
    return log.list.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.WARN)).toList();
  }

  private List<ILoggingEvent> infoLines() {
    return log.list.stream().filter(e -> e.getLevel() == Level.INFO).toList();
  }

  private static SubscriptionConfig subscription(String settings) {
    String hocon =
        """
        pubsub-worker {
          project-id = p
          subscriptions {
            orders {
              name = orders-sub
              handler = orders
              key = "attribute:id"
              lease = 3s
              heartbeat = false
              %s
            }
          }
        }
        """
            .formatted(settings);
    return WorkerConfig.load(
            ConfigFactory.parseString(hocon)
                .withFallback(ConfigFactory.defaultReference())
                .resolve())
        .subscriptions()
        .get("orders");
  }

  private static PubsubMessage message(String id) {
    return PubsubMessage.newBuilder()
        .setMessageId(id)
        .setData(ByteString.copyFromUtf8("payload"))
        .putAttributes("id", "po-1")
        .build();
  }

  private Reply reply(String id) {
    return new Reply() {
      @Override
      public void ack() {
        assertThat(replies.putIfAbsent(id, "ack")).as("settled once").isNull();
      }

      @Override
      public void nack() {
        assertThat(replies.putIfAbsent(id, "nack")).as("settled once").isNull();
      }
    };
  }
}
