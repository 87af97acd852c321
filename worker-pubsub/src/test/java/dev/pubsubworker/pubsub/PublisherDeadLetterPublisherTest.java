package dev.pubsubworker.pubsub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.api.gax.core.NoCredentialsProvider;
import com.google.api.gax.grpc.GrpcTransportChannel;
import com.google.api.gax.rpc.FixedTransportChannelProvider;
import com.google.api.gax.rpc.TransportChannelProvider;
import com.google.cloud.pubsub.v1.Publisher;
import com.google.cloud.pubsub.v1.TopicAdminClient;
import com.google.cloud.pubsub.v1.TopicAdminSettings;
import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.TopicName;
import dev.pubsubworker.embedded.EmbeddedPubSub;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link DeadLetterPublisher#of(Publisher, Duration)}: a letter is published and its id returned; a
 * publish that never completes fails at the timeout; a key paused by a failed ordered publish is
 * resumed, so the next letter of that key goes out.
 */
class PublisherDeadLetterPublisherTest {

  private ManagedChannel channel;
  private Publisher publisher;

  @AfterEach
  void close() throws Exception {
    // The channel first: a publish that hangs on it ends with it.
    if (channel != null) {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
    if (publisher != null) {
      publisher.shutdown();
      publisher.awaitTermination(5, TimeUnit.SECONDS);
    }
  }

  @Test
  void a_failed_ordered_publish_does_not_block_the_next_letter_of_its_key() throws Exception {
    try (EmbeddedPubSub pubsub = EmbeddedPubSub.start()) {
      TransportChannelProvider channels = channels(pubsub.hostPort());
      TopicName topic = TopicName.of("engine-test", "letters");
      publisher = publisher(topic, channels);
      DeadLetterPublisher letters = DeadLetterPublisher.of(publisher, Duration.ofSeconds(20));
      assertThat(letters.topic()).isEqualTo(topic.toString());

      // The topic does not exist yet: the publish fails, and the client pauses the key.
      assertThatThrownBy(() -> letters.publish(letter("customer-1")))
          .isInstanceOf(Exception.class)
          .hasMessageContaining("NOT_FOUND");
      try (TopicAdminClient topics =
          TopicAdminClient.create(
              TopicAdminSettings.newBuilder()
                  .setTransportChannelProvider(channels)
                  .setCredentialsProvider(NoCredentialsProvider.create())
                  .build())) {
        topics.createTopic(topic);
      }
      assertThat(letters.publish(letter("customer-1"))).isNotEmpty();
    }
  }

  @Test
  void a_publish_that_never_completes_fails_at_the_timeout() throws Exception {
    // A server that accepts connections and never answers: the publish hangs.
    try (ServerSocket silent = new ServerSocket(0)) {
      publisher =
          publisher(
              TopicName.of("engine-test", "silent"),
              channels("127.0.0.1:" + silent.getLocalPort()));
      DeadLetterPublisher letters = DeadLetterPublisher.of(publisher, Duration.ofMillis(300));
      assertThatThrownBy(() -> letters.publish(letter("")))
          .isInstanceOf(Exception.class)
          .hasMessage("timed out after PT0.3S");
    }
  }

  @Test
  void the_timeout_must_be_positive() throws Exception {
    publisher = publisher(TopicName.of("engine-test", "any"), channels("127.0.0.1:1"));
    assertThatThrownBy(() -> DeadLetterPublisher.of(publisher, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("timeout must be positive, but was PT0S");
  }

  private TransportChannelProvider channels(String hostPort) {
    channel = ManagedChannelBuilder.forTarget(hostPort).usePlaintext().build();
    return FixedTransportChannelProvider.create(GrpcTransportChannel.create(channel));
  }

  private static Publisher publisher(TopicName topic, TransportChannelProvider channels)
      throws Exception {
    return Publisher.newBuilder(topic)
        .setChannelProvider(channels)
        .setCredentialsProvider(NoCredentialsProvider.create())
        .setEnableMessageOrdering(true)
        .build();
  }

  private static PubsubMessage letter(String orderingKey) {
    return PubsubMessage.newBuilder()
        .setData(ByteString.copyFromUtf8("dead"))
        .setOrderingKey(orderingKey)
        .build();
  }
}
