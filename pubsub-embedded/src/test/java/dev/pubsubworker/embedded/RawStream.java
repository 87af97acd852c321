package dev.pubsubworker.embedded;

import com.google.api.gax.rpc.ClientStream;
import com.google.api.gax.rpc.ResponseObserver;
import com.google.api.gax.rpc.StreamController;
import com.google.pubsub.v1.ReceivedMessage;
import com.google.pubsub.v1.StreamingPullRequest;
import com.google.pubsub.v1.StreamingPullResponse;
import com.google.pubsub.v1.SubscriptionName;
import java.util.ArrayList;
import java.util.List;

/**
 * A StreamingPull stream the test speaks by hand: it sends the first request with the given
 * deadline and window, then only what the test asks for (no deadline extensions, no acks of its
 * own), and records what it receives. {@link #cancel()} ends it as a client that goes away does.
 */
final class RawStream {

  private final ClientStream<StreamingPullRequest> requests;
  private final List<ReceivedMessage> received = new ArrayList<>();
  private StreamController controller;

  private RawStream(PubSubTarget target) {
    requests =
        target
            .subscriptions
            .streamingPullCallable()
            .splitCall(
                new ResponseObserver<>() {
                  @Override
                  public void onStart(StreamController started) {
                    synchronized (RawStream.this) {
                      controller = started;
                    }
                  }

                  @Override
                  public void onResponse(StreamingPullResponse response) {
                    synchronized (RawStream.this) {
                      received.addAll(response.getReceivedMessagesList());
                    }
                  }

                  @Override
                  public void onError(Throwable t) {
                    // Ended by cancel() or by the server; what was received stays recorded.
                  }

                  @Override
                  public void onComplete() {}
                });
  }

  /**
   * Opens a stream on {@code subscription} with {@code ackDeadlineSeconds} and {@code
   * maxOutstandingMessages} (0: none sent).
   */
  static RawStream open(
      PubSubTarget target,
      SubscriptionName subscription,
      int ackDeadlineSeconds,
      long maxOutstandingMessages) {
    RawStream stream = new RawStream(target);
    stream.requests.send(
        StreamingPullRequest.newBuilder()
            .setSubscription(subscription.toString())
            .setStreamAckDeadlineSeconds(ackDeadlineSeconds)
            .setMaxOutstandingMessages(maxOutstandingMessages)
            .build());
    return stream;
  }

  /** What the stream received so far, in order. */
  synchronized List<ReceivedMessage> received() {
    return new ArrayList<>(received);
  }

  /** How many messages it received so far. */
  synchronized int count() {
    return received.size();
  }

  /** Acks {@code messages} on the stream. */
  void ack(List<ReceivedMessage> messages) {
    StreamingPullRequest.Builder request = StreamingPullRequest.newBuilder();
    messages.forEach(m -> request.addAckIds(m.getAckId()));
    requests.send(request.build());
  }

  /** Cancels the call, as a client that goes away does: it neither acks nor nacks. */
  synchronized void cancel() {
    if (controller != null) {
      controller.cancel();
    } else {
      requests.closeSendWithError(new IllegalStateException("cancelled by the test"));
    }
  }
}
