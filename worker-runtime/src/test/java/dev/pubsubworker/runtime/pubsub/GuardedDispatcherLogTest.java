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
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.runtime.config.SubscriptionConfig;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.testkit.ManualTime;
import java.net.ConnectException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The dispatcher's log during an outage and under a stream of unkeyed messages: a bounded number of
 * lines, each saying how many like it were held back, however many deliveries fail.
 */
class GuardedDispatcherLogTest {

  private final Logger logger = (Logger) LoggerFactory.getLogger(GuardedDispatcher.class);
  private final Logger deadLetterLogger = (Logger) LoggerFactory.getLogger(DeadLetters.class);
  private final ListAppender<ILoggingEvent> appender = new ListAppender<>();
  private final ManualTime time = new ManualTime();
  private final AtomicInteger handled = new AtomicInteger();
  private final AtomicInteger nacks = new AtomicInteger();
  private final MessageHandler handler = (m, c) -> handled.incrementAndGet();

  @BeforeEach
  void capture() {
    appender.start();
    logger.addAppender(appender);
    deadLetterLogger.addAppender(appender);
  }

  @AfterEach
  void release() {
    logger.detachAppender(appender);
    deadLetterLogger.detachAppender(appender);
  }

  @Test
  void a_thousand_store_failures_log_one_line_with_its_stack_trace_per_interval() {
    GuardedDispatcher dispatcher = dispatcher("", new UnreachableStore());
    for (int i = 0; i < 1000; i++) {
      dispatcher.dispatch(message(i, "order_id", "po-" + i), reply());
    }
    assertThat(nacks).hasValue(1000);
    assertThat(handled).hasValue(0);
    List<ILoggingEvent> lines = warnings();
    assertThat(lines).hasSize(1);
    assertThat(lines.get(0).getLevel()).isEqualTo(Level.ERROR);
    assertThat(lines.get(0).getFormattedMessage())
        .startsWith("lock store failed for message m-0 (attempt unknown (no dead-letter policy));")
        .doesNotContain("suppressed");
    assertThat(lines.get(0).getThrowableProxy()).as("the stack trace, once").isNotNull();

    time.advance(GuardedDispatcher.REPEAT_INTERVAL);
    dispatcher.dispatch(message(1000, "order_id", "po-1000"), reply());
    assertThat(warnings()).hasSize(2);
    assertThat(warnings().get(1).getFormattedMessage())
        .contains("(999 similar line(s) suppressed since the last one)");
  }

  @Test
  void a_thousand_unkeyed_deliveries_without_a_dead_letter_topic_log_one_error_per_interval() {
    GuardedDispatcher dispatcher =
        dispatcher("key = \"template:orders:{order_id}\"", new UnreachableStore());
    for (int i = 0; i < 1000; i++) {
      dispatcher.dispatch(message(i, "other", "x"), reply());
    }
    assertThat(nacks).hasValue(1000);
    assertThat(handled).hasValue(0);
    assertThat(warnings())
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.getLevel()).isEqualTo(Level.ERROR);
              assertThat(e.getFormattedMessage())
                  .startsWith("message m-0 has no key: template:orders:{order_id} did not resolve")
                  .contains("subscription orders has no dead-letter topic");
            });
    time.advance(GuardedDispatcher.REPEAT_INTERVAL);
    dispatcher.dispatch(message(1000, "other", "x"), reply());
    assertThat(warnings()).hasSize(2);
    assertThat(warnings().get(1).getFormattedMessage())
        .contains("(999 similar line(s) suppressed since the last one)");
  }

  @Test
  void a_poison_message_that_always_throws_logs_one_error_per_interval() {
    GuardedDispatcher dispatcher =
        new GuardedDispatcher(
            subscription("guard = none"),
            (m, c) -> {
              throw new IllegalStateException("poison");
            },
            IdempotencyGuard.newBuilder(new UnreachableStore()).build(),
            new DispatchListener() {},
            new InFlight(),
            k -> k,
            new RepeatLimiter(GuardedDispatcher.REPEAT_INTERVAL, time.clock()));
    for (int i = 0; i < 1000; i++) {
      dispatcher.dispatch(message(7, "order_id", "po-7"), reply());
    }
    assertThat(nacks).hasValue(1000);
    assertThat(warnings())
        .singleElement()
        .extracting(ILoggingEvent::getLevel)
        .isEqualTo(Level.ERROR);
  }

  @Test
  void a_thousand_nacks_of_held_keys_with_parking_off_log_one_warning_per_interval() {
    InMemoryLockBackend store = new InMemoryLockBackend(time.clock());
    for (int i = 0; i <= 1000; i++) {
      // Held by another worker's live claim, for longer than the test runs.
      store.claim("orders:po-" + i, Duration.ofHours(1), "other-worker");
    }
    GuardedDispatcher dispatcher =
        dispatcher("key = \"attribute:order_id\", in-progress-max-wait = 0s", store);
    for (int i = 0; i < 1000; i++) {
      dispatcher.dispatch(message(i, "order_id", "po-" + i), reply());
    }
    assertThat(nacks).hasValue(1000);
    assertThat(handled).hasValue(0);
    assertThat(warnings())
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.getLevel()).isEqualTo(Level.WARN);
              assertThat(e.getFormattedMessage())
                  .startsWith("key orders:po-0 is in progress elsewhere (held until ")
                  .doesNotContain("suppressed");
            });
    time.advance(GuardedDispatcher.REPEAT_INTERVAL);
    dispatcher.dispatch(message(1000, "order_id", "po-1000"), reply());
    assertThat(warnings()).hasSize(2);
    assertThat(warnings().get(1).getFormattedMessage())
        .contains("(999 similar line(s) suppressed since the last one)");
  }

  private List<ILoggingEvent> warnings() {
    return appender.list.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.WARN)).toList();
  }

  private GuardedDispatcher dispatcher(String settings, LockBackend store) {
    return new GuardedDispatcher(
        subscription(settings),
        handler,
        IdempotencyGuard.newBuilder(store).claimRetries(0).build(),
        new DispatchListener() {},
        new InFlight(),
        k -> k,
        new RepeatLimiter(GuardedDispatcher.REPEAT_INTERVAL, time.clock()));
  }

  private static SubscriptionConfig subscription(String settings) {
    String hocon =
        """
        pubsub-worker {
          project-id = p
          subscriptions { orders { name = orders-sub, handler = orders, %s } }
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

  private static PubsubMessage message(int n, String attribute, String value) {
    return PubsubMessage.newBuilder()
        .setMessageId("m-" + n)
        .setData(ByteString.copyFromUtf8("payload"))
        .putAttributes(attribute, value)
        .build();
  }

  private Reply reply() {
    return new Reply() {
      @Override
      public void ack() {
        throw new AssertionError("nothing here may be acked");
      }

      @Override
      public void nack() {
        nacks.incrementAndGet();
      }
    };
  }

  /** A lock store that cannot be reached: every verb fails as a real backend's would. */
  private static final class UnreachableStore implements LockBackend {
    private static LockBackendException down() {
      return new LockBackendException(
          "lock store unreachable (test)", new ConnectException("Connection refused"));
    }

    @Override
    public ClaimResult claim(ClaimRequest request) {
      throw down();
    }

    @Override
    public boolean complete(Claim claim, Duration ttl) {
      throw down();
    }

    @Override
    public void release(Claim claim) {
      throw down();
    }

    @Override
    public boolean extend(Claim claim, Duration lease) {
      throw down();
    }
  }
}
