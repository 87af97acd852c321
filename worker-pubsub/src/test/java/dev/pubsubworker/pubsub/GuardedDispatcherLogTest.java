package dev.pubsubworker.pubsub;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.google.cloud.pubsub.v1.AckReplyConsumer;
import com.google.pubsub.v1.PubsubMessage;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.backend.memory.InMemoryLockBackend;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.InvalidLockRecordException;
import dev.pubsubworker.core.LockBackend;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.testkit.ManualTime;
import java.net.ConnectException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The receiver's log during an outage and under a stream of unkeyed messages: a bounded number of
 * lines, each saying how many like it were held back, however many deliveries fail.
 */
class GuardedDispatcherLogTest {

  private final Logger logger = (Logger) LoggerFactory.getLogger("dev.pubsubworker.pubsub");
  private final ListAppender<ILoggingEvent> appender = new ListAppender<>();
  private final ManualTime time = new ManualTime();
  private final AtomicInteger handled = new AtomicInteger();
  private final AtomicInteger nacks = new AtomicInteger();
  private final MessageHandler handler = (m, c) -> handled.incrementAndGet();

  @BeforeEach
  void capture() {
    appender.start();
    logger.addAppender(appender);
  }

  @AfterEach
  void release() {
    logger.detachAppender(appender);
  }

  @Test
  void a_thousand_store_failures_log_one_line_with_its_stack_trace_per_interval() {
    GuardedReceiver receiver = receiver(MessageKey.attribute("order_id"), new UnreachableStore());
    for (int i = 0; i < 1000; i++) {
      dispatch(receiver, message(i, "order_id", "po-" + i));
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

    time.advance(GuardedReceiver.REPEAT_INTERVAL);
    dispatch(receiver, message(1000, "order_id", "po-1000"));
    assertThat(warnings()).hasSize(2);
    assertThat(warnings().get(1).getFormattedMessage())
        .contains("(999 similar line(s) suppressed since the last one)");
  }

  @Test
  void
      deliveries_whose_record_is_unreadable_are_nacked_with_one_error_per_interval_saying_what_to_do() {
    GuardedReceiver receiver = receiver(MessageKey.messageId(), new UnreadableStore());
    for (int i = 0; i < 1000; i++) {
      dispatch(receiver, message(i, "order_id", "po-" + i));
    }
    assertThat(nacks).hasValue(1000);
    assertThat(handled).hasValue(0);
    assertThat(warnings())
        .singleElement()
        .satisfies(
            e -> {
              assertThat(e.getLevel()).isEqualTo(Level.ERROR);
              assertThat(e.getFormattedMessage())
                  .startsWith(
                      "the lock store holds a record for key orders:m-0 that cannot be read (state"
                          + " 'X' is neither CLAIMED nor DONE); message m-0 (attempt unknown (no"
                          + " dead-letter policy)) nacked, its handler not run.")
                  .contains("see it with `inspect KEY`, remove it with `forget KEY`");
              assertThat(e.getThrowableProxy()).as("no stack trace: nothing failed").isNull();
            });
    time.advance(GuardedReceiver.REPEAT_INTERVAL);
    dispatch(receiver, message(1000, "order_id", "po-1000"));
    assertThat(warnings()).hasSize(2);
    assertThat(warnings().get(1).getFormattedMessage())
        .contains("key orders:m-1000")
        .contains("(999 similar line(s) suppressed since the last one)");
  }

  @Test
  void a_thousand_unkeyed_deliveries_without_a_dead_letter_topic_log_one_error_per_interval() {
    MessageKey template =
        MessageKey.of(
            "template:orders:{order_id}", m -> m.attribute("order_id").map(id -> "orders:" + id));
    GuardedReceiver receiver = receiver(template, new UnreachableStore());
    for (int i = 0; i < 1000; i++) {
      dispatch(receiver, message(i, "other", "x"));
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
    time.advance(GuardedReceiver.REPEAT_INTERVAL);
    dispatch(receiver, message(1000, "other", "x"));
    assertThat(warnings()).hasSize(2);
    assertThat(warnings().get(1).getFormattedMessage())
        .contains("(999 similar line(s) suppressed since the last one)");
  }

  @Test
  void a_poison_message_that_always_throws_logs_one_error_per_interval() {
    GuardedReceiver receiver =
        GuardedReceiver.newBuilder(
                "orders",
                (m, c) -> {
                  throw new IllegalStateException("poison");
                })
            .mode(GuardMode.NONE)
            .clock(time.clock())
            .build();
    for (int i = 0; i < 1000; i++) {
      dispatch(receiver, message(7, "order_id", "po-7"));
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
    GuardedReceiver receiver =
        GuardedReceiver.newBuilder("orders", handler)
            .guard(IdempotencyGuard.newBuilder(store).claimRetries(0).build())
            .key(MessageKey.attribute("order_id").withNamespace("orders"))
            .inProgressMaxWait(Duration.ZERO)
            .clock(time.clock())
            .build();
    for (int i = 0; i < 1000; i++) {
      dispatch(receiver, message(i, "order_id", "po-" + i));
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
    time.advance(GuardedReceiver.REPEAT_INTERVAL);
    dispatch(receiver, message(1000, "order_id", "po-1000"));
    assertThat(warnings()).hasSize(2);
    assertThat(warnings().get(1).getFormattedMessage())
        .contains("(999 similar line(s) suppressed since the last one)");
  }

  private List<ILoggingEvent> warnings() {
    return appender.list.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.WARN)).toList();
  }

  private GuardedReceiver receiver(MessageKey key, LockBackend store) {
    return GuardedReceiver.newBuilder("orders", handler)
        .guard(IdempotencyGuard.newBuilder(store).claimRetries(0).build())
        .key(key.withNamespace("orders"))
        .clock(time.clock())
        .build();
  }

  private void dispatch(GuardedReceiver receiver, PubsubMessage message) {
    receiver
        .asMessageReceiver()
        .receiveMessage(
            message,
            new AckReplyConsumer() {
              @Override
              public void ack() {
                throw new AssertionError("nothing here may be acked");
              }

              @Override
              public void nack() {
                nacks.incrementAndGet();
              }
            });
  }

  private static PubsubMessage message(int n, String attribute, String value) {
    return Replies.message("m-" + n, attribute, value);
  }

  /** A lock store whose every record is unreadable, as a backend reports one. */
  private static final class UnreadableStore implements LockBackend {
    private static InvalidLockRecordException unreadable(String verb, String key) {
      return new InvalidLockRecordException(
          verb + " failed on test store",
          key,
          "state 'X' is neither CLAIMED nor DONE",
          Map.of("state", "X"));
    }

    @Override
    public ClaimResult claim(ClaimRequest request) {
      throw unreadable("claim", request.key());
    }

    @Override
    public boolean complete(Claim claim, Duration ttl) {
      throw unreadable("complete", claim.key());
    }

    @Override
    public void release(Claim claim) {
      throw unreadable("release", claim.key());
    }

    @Override
    public boolean extend(Claim claim, Duration lease) {
      throw unreadable("extend", claim.key());
    }
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
