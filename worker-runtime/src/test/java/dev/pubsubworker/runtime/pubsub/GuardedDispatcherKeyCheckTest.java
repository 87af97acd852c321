package dev.pubsubworker.runtime.pubsub;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.typesafe.config.ConfigFactory;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.backend.memory.InMemoryLockBackend;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.InvalidLockKeyException;
import dev.pubsubworker.runtime.config.SubscriptionConfig;
import dev.pubsubworker.runtime.config.WorkerConfig;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The key is checked once, by the guard: an invalid key settles as UNKEYED (nacked, nothing
 * claimed, the handler never runs), while the same exception type thrown by a handler is a handler
 * failure.
 */
class GuardedDispatcherKeyCheckTest {

  private final InMemoryLockBackend store = new InMemoryLockBackend();
  private final List<Outcome> outcomes = new CopyOnWriteArrayList<>();
  private final AtomicInteger handled = new AtomicInteger();
  private final AtomicInteger nacks = new AtomicInteger();

  @Test
  void an_invalid_key_is_unkeyed_and_claims_nothing() {
    GuardedDispatcher dispatcher = dispatcher((m, c) -> handled.incrementAndGet());
    dispatcher.dispatch(message("x".repeat(70_000)), reply());
    assertThat(outcomes).containsExactly(Outcome.UNKEYED);
    assertThat(nacks).hasValue(1);
    assertThat(handled).hasValue(0);
    assertThat(store.size()).isZero();

    dispatcher.dispatch(message("po-1"), reply());
    assertThat(outcomes).containsExactly(Outcome.UNKEYED, Outcome.PROCESSED);
    assertThat(handled).hasValue(1);
  }

  @Test
  void the_same_exception_from_a_handler_is_a_handler_failure() {
    GuardedDispatcher dispatcher =
        dispatcher(
            (m, c) -> {
              handled.incrementAndGet();
              throw new InvalidLockKeyException(new IllegalArgumentException("the handler's own"));
            });
    dispatcher.dispatch(message("po-2"), reply());
    assertThat(outcomes).containsExactly(Outcome.FAILED);
    assertThat(handled).hasValue(1);
    assertThat(nacks).hasValue(1);
  }

  private GuardedDispatcher dispatcher(MessageHandler handler) {
    return new GuardedDispatcher(
        subscription(),
        handler,
        IdempotencyGuard.newBuilder(store).build(),
        new DispatchListener() {
          @Override
          public void settled(String subscription, Outcome outcome, Duration handlerTime) {
            outcomes.add(outcome);
          }
        },
        new InFlight(),
        k -> k);
  }

  private static SubscriptionConfig subscription() {
    String hocon =
        """
        pubsub-worker {
          project-id = p
          subscriptions {
            orders { name = orders-sub, handler = orders, key = "template:{order_id}" }
          }
        }
        """;
    return WorkerConfig.load(
            ConfigFactory.parseString(hocon)
                .withFallback(ConfigFactory.defaultReference())
                .resolve())
        .subscriptions()
        .get("orders");
  }

  private static PubsubMessage message(String orderId) {
    return PubsubMessage.newBuilder()
        .setMessageId("m-" + orderId.length())
        .setData(ByteString.copyFromUtf8("payload"))
        .putAttributes("order_id", orderId)
        .build();
  }

  private Reply reply() {
    return new Reply() {
      @Override
      public void ack() {}

      @Override
      public void nack() {
        nacks.incrementAndGet();
      }
    };
  }
}
