package dev.pubsubworker.pubsub;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.api.core.ApiFuture;
import com.google.api.core.ApiFutures;
import com.google.cloud.pubsub.v1.AckReplyConsumer;
import com.google.cloud.pubsub.v1.AckReplyConsumerWithResponse;
import com.google.cloud.pubsub.v1.AckResponse;
import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** The replies a test's receiver gave, by message id, each at most once; and test messages. */
final class Replies {

  final Map<String, String> byMessage = new ConcurrentHashMap<>();

  /** A consumer that records the reply to {@code id} and fails on a second one. */
  AckReplyConsumer consumer(String id) {
    return new AckReplyConsumer() {
      @Override
      public void ack() {
        assertThat(byMessage.putIfAbsent(id, "ack")).as("settled once").isNull();
      }

      @Override
      public void nack() {
        assertThat(byMessage.putIfAbsent(id, "nack")).as("settled once").isNull();
      }
    };
  }

  /** An exactly-once consumer whose acks complete with {@code response}. */
  AckReplyConsumerWithResponse withResponse(String id, AckResponse response) {
    AckReplyConsumer plain = consumer(id);
    return new AckReplyConsumerWithResponse() {
      @Override
      public ApiFuture<AckResponse> ack() {
        plain.ack();
        return ApiFutures.immediateFuture(response);
      }

      @Override
      public ApiFuture<AckResponse> nack() {
        plain.nack();
        return ApiFutures.immediateFuture(AckResponse.SUCCESSFUL);
      }
    };
  }

  /** A message {@code id} with payload "payload" and the attribute {@code name = value}. */
  static PubsubMessage message(String id, String name, String value) {
    return PubsubMessage.newBuilder()
        .setMessageId(id)
        .setData(ByteString.copyFromUtf8("payload"))
        .putAttributes(name, value)
        .build();
  }
}
