package dev.pubsubworker.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.api.gax.core.CredentialsProvider;
import com.google.api.gax.core.NoCredentialsProvider;
import com.google.api.gax.grpc.GrpcCallContext;
import com.google.api.gax.grpc.GrpcTransportChannel;
import com.google.api.gax.rpc.DeadlineExceededException;
import com.google.api.gax.rpc.FixedTransportChannelProvider;
import com.google.api.gax.rpc.TransportChannelProvider;
import com.google.cloud.pubsub.v1.MessageReceiver;
import com.google.cloud.pubsub.v1.Publisher;
import com.google.cloud.pubsub.v1.SchemaServiceClient;
import com.google.cloud.pubsub.v1.SchemaServiceSettings;
import com.google.cloud.pubsub.v1.Subscriber;
import com.google.cloud.pubsub.v1.SubscriptionAdminClient;
import com.google.cloud.pubsub.v1.SubscriptionAdminSettings;
import com.google.cloud.pubsub.v1.TopicAdminClient;
import com.google.cloud.pubsub.v1.TopicAdminSettings;
import com.google.protobuf.ByteString;
import com.google.protobuf.Timestamp;
import com.google.pubsub.v1.ModifyAckDeadlineRequest;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.PullRequest;
import com.google.pubsub.v1.ReceivedMessage;
import com.google.pubsub.v1.SeekRequest;
import com.google.pubsub.v1.Subscription;
import com.google.pubsub.v1.SubscriptionName;
import com.google.pubsub.v1.TopicName;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

/**
 * A Pub/Sub server reached as through {@code PUBSUB_EMULATOR_HOST}: a plaintext channel, no
 * credentials, and the real client's admin clients, publishers and subscribers on it.
 */
final class PubSubTarget implements AutoCloseable {

  private static final AtomicLong NAMES = new AtomicLong();

  final String hostPort;
  final String project;
  final ManagedChannel channel;
  final TransportChannelProvider channelProvider;
  final TopicAdminClient topics;
  final SubscriptionAdminClient subscriptions;
  final SchemaServiceClient schemas;

  PubSubTarget(String hostPort, String project) {
    this.hostPort = hostPort;
    this.project = project;
    this.channel =
        ManagedChannelBuilder.forTarget(hostPort)
            .usePlaintext()
            .maxInboundMessageSize(20 * 1024 * 1024)
            .build();
    this.channelProvider =
        FixedTransportChannelProvider.create(GrpcTransportChannel.create(channel));
    try {
      this.topics =
          TopicAdminClient.create(
              TopicAdminSettings.newBuilder()
                  .setTransportChannelProvider(channelProvider)
                  .setCredentialsProvider(credentials())
                  .build());
      this.subscriptions =
          SubscriptionAdminClient.create(
              SubscriptionAdminSettings.newBuilder()
                  .setTransportChannelProvider(channelProvider)
                  .setCredentialsProvider(credentials())
                  .build());
      this.schemas =
          SchemaServiceClient.create(
              SchemaServiceSettings.newBuilder()
                  .setTransportChannelProvider(channelProvider)
                  .setCredentialsProvider(credentials())
                  .build());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static CredentialsProvider credentials() {
    return NoCredentialsProvider.create();
  }

  /** A fresh id for a snapshot or a schema. */
  String uniqueId(String prefix) {
    return prefix + "-" + System.nanoTime() + "-" + NAMES.incrementAndGet();
  }

  TopicName topicName(String prefix) {
    return TopicName.of(project, prefix + "-" + System.nanoTime() + "-" + NAMES.incrementAndGet());
  }

  SubscriptionName subscriptionName(String prefix) {
    return SubscriptionName.of(
        project, prefix + "-" + System.nanoTime() + "-" + NAMES.incrementAndGet());
  }

  Publisher.Builder publisher(TopicName topic) {
    return Publisher.newBuilder(topic)
        .setChannelProvider(channelProvider)
        .setCredentialsProvider(credentials());
  }

  Subscriber.Builder subscriber(SubscriptionName subscription, MessageReceiver receiver) {
    return Subscriber.newBuilder(subscription.toString(), receiver)
        .setChannelProvider(channelProvider)
        .setCredentialsProvider(credentials());
  }

  /** One unary Pull waiting at most {@code deadline}; empty when nothing came in time. */
  List<ReceivedMessage> pull(SubscriptionName subscription, int max, Duration deadline) {
    PullRequest request =
        PullRequest.newBuilder()
            .setSubscription(subscription.toString())
            .setMaxMessages(max)
            .build();
    try {
      return subscriptions
          .pullCallable()
          .call(request, GrpcCallContext.createDefault().withTimeoutDuration(deadline))
          .getReceivedMessagesList();
    } catch (DeadlineExceededException e) {
      return List.of();
    }
  }

  @Override
  public void close() {
    topics.close();
    subscriptions.close();
    schemas.close();
    channel.shutdownNow();
    try {
      channel.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  // ---- scenario steps ----

  /** How long a Pull that should find nothing is given. */
  static final Duration QUIET = Duration.ofMillis(1500);

  TopicName createTopic(String prefix) {
    TopicName topic = topicName(prefix);
    topics.createTopic(topic);
    return topic;
  }

  SubscriptionName createSubscription(TopicName topic, Subscription.Builder settings) {
    SubscriptionName name = subscriptionName("sub");
    subscriptions.createSubscription(
        settings.setName(name.toString()).setTopic(topic.toString()).build());
    return name;
  }

  void publish(TopicName topic, String... texts) {
    List<PubsubMessage> messages = new ArrayList<>();
    for (String text : texts) {
      messages.add(PubsubMessage.newBuilder().setData(ByteString.copyFromUtf8(text)).build());
    }
    topics.publish(topic, messages);
  }

  /** Pulls until exactly {@code count} messages came (never asking for more), within 20 s. */
  List<ReceivedMessage> pullExactly(SubscriptionName subscription, int count) {
    List<ReceivedMessage> received = new ArrayList<>();
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(50))
        .until(
            () -> {
              received.addAll(pull(subscription, count - received.size(), Duration.ofSeconds(2)));
              return received.size() >= count;
            });
    assertThat(received).hasSize(count);
    return received;
  }

  /** One Pull given {@link #QUIET}: what it returns. */
  List<ReceivedMessage> pullOnce(SubscriptionName subscription) {
    return pull(subscription, 10, QUIET);
  }

  void acknowledge(SubscriptionName subscription, List<ReceivedMessage> messages) {
    subscriptions.acknowledge(
        subscription,
        messages.stream().map(ReceivedMessage::getAckId).collect(Collectors.toList()));
  }

  void nack(SubscriptionName subscription, ReceivedMessage message) {
    subscriptions
        .modifyAckDeadlineCallable()
        .call(
            ModifyAckDeadlineRequest.newBuilder()
                .setSubscription(subscription.toString())
                .addAckIds(message.getAckId())
                .setAckDeadlineSeconds(0)
                .build());
  }

  void seek(SubscriptionName subscription, Timestamp time) {
    subscriptions.seek(
        SeekRequest.newBuilder().setSubscription(subscription.toString()).setTime(time).build());
  }
}
