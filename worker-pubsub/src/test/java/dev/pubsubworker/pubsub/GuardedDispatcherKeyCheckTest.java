package dev.pubsubworker.pubsub;

import static org.assertj.core.api.Assertions.assertThat;

import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.backend.memory.InMemoryLockBackend;
import dev.pubsubworker.core.IdempotencyGuard;
import dev.pubsubworker.core.InvalidLockKeyException;
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
  private final Replies replies = new Replies();

  @Test
  void an_invalid_key_is_unkeyed_and_claims_nothing() {
    GuardedReceiver receiver = receiver((m, c) -> handled.incrementAndGet());
    dispatch(receiver, "m-1", "x".repeat(70_000));
    assertThat(outcomes).containsExactly(Outcome.UNKEYED);
    assertThat(replies.byMessage).containsEntry("m-1", "nack");
    assertThat(handled).hasValue(0);
    assertThat(store.size()).isZero();

    dispatch(receiver, "m-2", "po-1");
    assertThat(outcomes).containsExactly(Outcome.UNKEYED, Outcome.PROCESSED);
    assertThat(handled).hasValue(1);
  }

  @Test
  void the_same_exception_from_a_handler_is_a_handler_failure() {
    GuardedReceiver receiver =
        receiver(
            (m, c) -> {
              handled.incrementAndGet();
              throw new InvalidLockKeyException(new IllegalArgumentException("the handler's own"));
            });
    dispatch(receiver, "m-1", "po-2");
    assertThat(outcomes).containsExactly(Outcome.FAILED);
    assertThat(handled).hasValue(1);
    assertThat(replies.byMessage).containsEntry("m-1", "nack");
  }

  private void dispatch(GuardedReceiver receiver, String id, String orderId) {
    receiver
        .asMessageReceiver()
        .receiveMessage(Replies.message(id, "order_id", orderId), replies.consumer(id));
  }

  private GuardedReceiver receiver(MessageHandler handler) {
    return GuardedReceiver.newBuilder("orders", handler)
        .guard(IdempotencyGuard.newBuilder(store).build())
        .key(MessageKey.attribute("order_id").withNamespace("orders"))
        .listener(
            new ReceiverListener() {
              @Override
              public void settled(String subscription, Outcome outcome, Duration handlerTime) {
                outcomes.add(outcome);
              }
            })
        .build();
  }
}
