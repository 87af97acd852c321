package dev.pubsubworker.embedded;

import com.google.pubsub.v1.StreamingPullResponse;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;

/**
 * One open StreamingPull call: its flow control, its allowance and the messages leased to it.
 * Guarded by the {@link Broker}'s lock; every call on {@link #observer} is made under that lock,
 * which serializes them as gRPC requires.
 *
 * <p>A stream may hold as many outstanding messages as its window allows ({@code
 * max_outstanding_messages} and {@code max_outstanding_bytes}; no limit when 0) and as its
 * allowance allows. The allowance models Pub/Sub's gradual delivery, so that a stream opened a
 * moment before the others does not take a whole backlog: it is the larger of the stream's ramp
 * ({@link #RAMP_START} when it opens, {@link #RAMP_PER_SECOND} more per second of the server's
 * clock since, and one more for each of its messages that was acked) and the most any other open
 * stream of the subscription holds, so a stream that opens later may catch up with the others at
 * once.
 */
final class PullStream {

  /** How many outstanding messages a stream may hold as soon as it opens. */
  static final long RAMP_START = 10;

  /** How much the allowance grows per second of the server's clock after the stream opened. */
  static final long RAMP_PER_SECOND = 200;

  final SubscriptionState subscription;
  final ServerCallStreamObserver<StreamingPullResponse> observer;
  final long maxOutstandingMessages;
  final long maxOutstandingBytes;
  final Instant openedAt;
  int ackDeadlineSeconds;
  final Map<String, QueuedMessage> outstanding = new HashMap<>();
  long outstandingBytes;
  boolean open = true;

  /** How many messages leased to this stream were acked. */
  long acked;

  /** The subscription's delivery count when this stream last got a message; 0 if never. */
  long lastDealt;

  PullStream(
      SubscriptionState subscription,
      ServerCallStreamObserver<StreamingPullResponse> observer,
      int ackDeadlineSeconds,
      long maxOutstandingMessages,
      long maxOutstandingBytes,
      Instant openedAt) {
    this.subscription = subscription;
    this.observer = observer;
    this.ackDeadlineSeconds = ackDeadlineSeconds;
    this.maxOutstandingMessages = maxOutstandingMessages;
    this.maxOutstandingBytes = maxOutstandingBytes;
    this.openedAt = openedAt;
  }

  /**
   * How many outstanding messages the stream may hold at {@code now} while the fullest other open
   * stream of its subscription holds {@code othersHold}: its ramp ({@link #RAMP_START} + {@link
   * #RAMP_PER_SECOND} per second since it opened + its acked messages) or {@code othersHold},
   * whichever is larger, capped by {@code max_outstanding_messages} when the client set one.
   */
  long allowance(Instant now, long othersHold) {
    long ageMillis = Math.max(0, Duration.between(openedAt, now).toMillis());
    long ramp = RAMP_START + ageMillis * RAMP_PER_SECOND / 1000 + acked;
    long allowance = Math.max(ramp, othersHold);
    return maxOutstandingMessages > 0 ? Math.min(allowance, maxOutstandingMessages) : allowance;
  }

  /**
   * Whether one more message may be sent now: within the {@link #allowance} and the bytes window.
   */
  boolean hasRoom(Instant now, long othersHold) {
    return outstanding.size() < allowance(now, othersHold)
        && (maxOutstandingBytes <= 0 || outstandingBytes < maxOutstandingBytes);
  }

  void add(String ackId, QueuedMessage message) {
    if (outstanding.put(ackId, message) == null) {
      outstandingBytes += message.bytes;
    }
  }

  void remove(String ackId) {
    QueuedMessage removed = outstanding.remove(ackId);
    if (removed != null) {
      outstandingBytes -= removed.bytes;
    }
  }

  /** Ends the call with {@code status}; idempotent. */
  void close(Status status) {
    if (!open) {
      return;
    }
    open = false;
    try {
      if (status.isOk()) {
        observer.onCompleted();
      } else {
        observer.onError(status.asRuntimeException());
      }
    } catch (RuntimeException alreadyClosed) {
      // The call was cancelled by the client at the same moment: nothing left to tell it.
    }
  }
}
