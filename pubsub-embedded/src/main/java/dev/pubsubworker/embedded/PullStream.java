package dev.pubsubworker.embedded;

import com.google.pubsub.v1.StreamingPullResponse;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import java.util.HashMap;
import java.util.Map;

/**
 * One open StreamingPull call: its flow control and the messages leased to it. Guarded by the
 * {@link Broker}'s lock; every call on {@link #observer} is made under that lock, which serializes
 * them as gRPC requires.
 */
final class PullStream {

  final SubscriptionState subscription;
  final ServerCallStreamObserver<StreamingPullResponse> observer;
  final long maxOutstandingMessages;
  final long maxOutstandingBytes;
  int ackDeadlineSeconds;
  final Map<String, QueuedMessage> outstanding = new HashMap<>();
  long outstandingBytes;
  boolean open = true;

  PullStream(
      SubscriptionState subscription,
      ServerCallStreamObserver<StreamingPullResponse> observer,
      int ackDeadlineSeconds,
      long maxOutstandingMessages,
      long maxOutstandingBytes) {
    this.subscription = subscription;
    this.observer = observer;
    this.ackDeadlineSeconds = ackDeadlineSeconds;
    this.maxOutstandingMessages = maxOutstandingMessages;
    this.maxOutstandingBytes = maxOutstandingBytes;
  }

  boolean hasCapacity() {
    return (maxOutstandingMessages <= 0 || outstanding.size() < maxOutstandingMessages)
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
