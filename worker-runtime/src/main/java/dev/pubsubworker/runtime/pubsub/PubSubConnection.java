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
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * How this process reaches Pub/Sub: a plaintext channel with no credentials to an emulator, or the
 * client libraries' defaults (Application Default Credentials, the regional endpoint) otherwise.
 * Owns the emulator channel; {@link #close()} shuts it down.
 */
public final class PubSubConnection implements AutoCloseable {

  private final ManagedChannel emulatorChannel;

  private PubSubConnection(ManagedChannel emulatorChannel) {
    this.emulatorChannel = emulatorChannel;
  }

  /**
   * A connection to the emulator at {@code emulatorHost} if present, else to Google Cloud.
   *
   * @param emulatorHost host:port of a Pub/Sub emulator
   */
  public static PubSubConnection create(Optional<String> emulatorHost) {
    return new PubSubConnection(
        emulatorHost
            .map(h -> ManagedChannelBuilder.forTarget(h).usePlaintext().build())
            .orElse(null));
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

  /** Shuts the emulator channel down, waiting up to 5 s. */
  @Override
  public void close() {
    if (emulatorChannel != null) {
      emulatorChannel.shutdown();
      try {
        if (!emulatorChannel.awaitTermination(5, TimeUnit.SECONDS)) {
          emulatorChannel.shutdownNow();
        }
      } catch (InterruptedException e) {
        emulatorChannel.shutdownNow();
        Thread.currentThread().interrupt();
      }
    }
  }
}
