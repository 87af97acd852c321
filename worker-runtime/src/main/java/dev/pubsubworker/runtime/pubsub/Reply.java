package dev.pubsubworker.runtime.pubsub;

import com.google.api.core.ApiFuture;
import com.google.api.core.ApiFutureCallback;
import com.google.api.core.ApiFutures;
import com.google.cloud.pubsub.v1.AckReplyConsumer;
import com.google.cloud.pubsub.v1.AckReplyConsumerWithResponse;
import com.google.cloud.pubsub.v1.AckResponse;
import com.google.common.util.concurrent.MoreExecutors;
import java.util.function.Consumer;

/** Acks or nacks one delivery, over either of the client's two consumer types. */
interface Reply {

  void ack();

  void nack();

  static Reply of(AckReplyConsumer consumer) {
    return new Reply() {
      @Override
      public void ack() {
        consumer.ack();
      }

      @Override
      public void nack() {
        consumer.nack();
      }
    };
  }

  /**
   * An exactly-once reply: every ack's response (or failure) is handed to {@code onResponse}. Nacks
   * are fire-and-forget: a failed nack only delays the redelivery.
   */
  static Reply withResponse(
      AckReplyConsumerWithResponse consumer, Consumer<AckResponse> onResponse) {
    return new Reply() {
      @Override
      public void ack() {
        ApiFuture<AckResponse> future = consumer.ack();
        ApiFutures.addCallback(
            future,
            new ApiFutureCallback<AckResponse>() {
              @Override
              public void onSuccess(AckResponse response) {
                onResponse.accept(response);
              }

              @Override
              public void onFailure(Throwable t) {
                onResponse.accept(AckResponse.OTHER);
              }
            },
            MoreExecutors.directExecutor());
      }

      @Override
      public void nack() {
        consumer.nack();
      }
    };
  }
}
