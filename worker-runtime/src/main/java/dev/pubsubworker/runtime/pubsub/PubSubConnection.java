package dev.pubsubworker.runtime.pubsub;

import com.google.api.gax.core.CredentialsProvider;
import com.google.api.gax.core.NoCredentialsProvider;
import com.google.api.gax.grpc.GrpcTransportChannel;
import com.google.api.gax.rpc.FixedTransportChannelProvider;
import com.google.api.gax.rpc.TransportChannelProvider;
import com.google.cloud.pubsub.v1.Publisher;
import com.google.cloud.pubsub.v1.SubscriptionAdminSettings;
import com.google.cloud.pubsub.v1.TopicAdminSettings;
import com.google.pubsub.v1.TopicName;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * How this process reaches Pub/Sub: a plaintext channel with no credentials to an emulator, or the
 * client libraries' defaults (Application Default Credentials, the regional endpoint) otherwise.
 * Owns the emulator channel; {@link #close()} shuts it down.
 */
public final class PubSubConnection implements AutoCloseable {

  /** The most {@link #close()} waits for the channel's calls to end. */
  public static final java.time.Duration CLOSE_TIMEOUT = java.time.Duration.ofSeconds(5);

  private final ManagedChannel emulatorChannel;
  private final List<ClientInterceptor> interceptors;

  private PubSubConnection(ManagedChannel emulatorChannel, List<ClientInterceptor> interceptors) {
    this.emulatorChannel = emulatorChannel;
    this.interceptors = interceptors;
  }

  /**
   * A connection to the emulator at {@code emulatorHost} if present, else to Google Cloud.
   *
   * @param emulatorHost host:port of a Pub/Sub emulator
   */
  public static PubSubConnection create(Optional<String> emulatorHost) {
    return create(emulatorHost, List.of());
  }

  /**
   * As {@link #create(Optional)}, with {@code interceptors} on every call of the emulator channel,
   * and on the subscribers' channels to Google Cloud ({@link #subscriberChannelProvider()}).
   */
  public static PubSubConnection create(
      Optional<String> emulatorHost, List<ClientInterceptor> interceptors) {
    List<ClientInterceptor> list = List.copyOf(interceptors);
    return new PubSubConnection(
        emulatorHost
            .map(h -> ManagedChannelBuilder.forTarget(h).usePlaintext().intercept(list).build())
            .orElse(null),
        list);
  }

  /** Whether this connection goes to an emulator. */
  public boolean isEmulator() {
    return emulatorChannel != null;
  }

  /** The channel provider for clients; empty means the client's default. */
  public Optional<TransportChannelProvider> channelProvider() {
    return emulatorChannel == null
        ? Optional.empty()
        : Optional.of(
            FixedTransportChannelProvider.create(GrpcTransportChannel.create(emulatorChannel)));
  }

  /**
   * The channel provider for streaming-pull subscribers: the emulator channel, or the subscriber's
   * default channel to Google Cloud (20 MB inbound messages, 5-minute keep-alive, as the client
   * library's {@code Subscriber} sets it) with this connection's interceptors.
   */
  public TransportChannelProvider subscriberChannelProvider() {
    if (emulatorChannel != null) {
      return FixedTransportChannelProvider.create(GrpcTransportChannel.create(emulatorChannel));
    }
    return SubscriptionAdminSettings.defaultGrpcTransportProviderBuilder()
        .setMaxInboundMessageSize(20 * 1024 * 1024)
        .setMaxInboundMetadataSize(4 * 1024 * 1024)
        .setKeepAliveTimeDuration(java.time.Duration.ofMinutes(5))
        .setInterceptorProvider(() -> interceptors)
        .build();
  }

  /** No credentials for an emulator; Application Default Credentials otherwise. */
  public CredentialsProvider credentialsProvider() {
    return emulatorChannel != null
        ? NoCredentialsProvider.create()
        : SubscriptionAdminSettings.defaultCredentialsProviderBuilder().build();
  }

  /** Settings for a subscription admin client on this connection. */
  public SubscriptionAdminSettings subscriptionAdminSettings() throws java.io.IOException {
    SubscriptionAdminSettings.Builder b =
        SubscriptionAdminSettings.newBuilder().setCredentialsProvider(credentialsProvider());
    channelProvider().ifPresent(b::setTransportChannelProvider);
    return b.build();
  }

  /** Settings for a topic admin client on this connection. */
  public TopicAdminSettings topicAdminSettings() throws java.io.IOException {
    TopicAdminSettings.Builder b =
        TopicAdminSettings.newBuilder().setCredentialsProvider(credentialsProvider());
    channelProvider().ifPresent(b::setTransportChannelProvider);
    return b.build();
  }

  /** A publisher builder for {@code topic} on this connection; the caller shuts it down. */
  public Publisher.Builder publisher(TopicName topic) {
    Publisher.Builder b = Publisher.newBuilder(topic).setCredentialsProvider(credentialsProvider());
    channelProvider().ifPresent(b::setChannelProvider);
    return b;
  }

  /** Shuts the emulator channel down, waiting up to {@link #CLOSE_TIMEOUT}. */
  @Override
  public void close() {
    if (emulatorChannel != null) {
      emulatorChannel.shutdown();
      try {
        if (!emulatorChannel.awaitTermination(CLOSE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
          emulatorChannel.shutdownNow();
        }
      } catch (InterruptedException e) {
        emulatorChannel.shutdownNow();
        Thread.currentThread().interrupt();
      }
    }
  }
}
