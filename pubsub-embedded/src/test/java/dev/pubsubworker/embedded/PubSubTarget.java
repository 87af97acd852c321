package dev.pubsubworker.embedded;

import com.google.api.gax.core.CredentialsProvider;
import com.google.api.gax.core.NoCredentialsProvider;
import com.google.api.gax.grpc.GrpcCallContext;
import com.google.api.gax.grpc.GrpcTransportChannel;
import com.google.api.gax.rpc.DeadlineExceededException;
import com.google.api.gax.rpc.FixedTransportChannelProvider;
import com.google.api.gax.rpc.TransportChannelProvider;
import com.google.cloud.pubsub.v1.MessageReceiver;
import com.google.cloud.pubsub.v1.Publisher;
import com.google.cloud.pubsub.v1.Subscriber;
import com.google.cloud.pubsub.v1.SubscriptionAdminClient;
import com.google.cloud.pubsub.v1.SubscriptionAdminSettings;
import com.google.cloud.pubsub.v1.TopicAdminClient;
import com.google.cloud.pubsub.v1.TopicAdminSettings;
import com.google.pubsub.v1.PullRequest;
import com.google.pubsub.v1.ReceivedMessage;
import com.google.pubsub.v1.SubscriptionName;
import com.google.pubsub.v1.TopicName;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

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
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static CredentialsProvider credentials() {
    return NoCredentialsProvider.create();
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
    channel.shutdownNow();
    try {
      channel.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
