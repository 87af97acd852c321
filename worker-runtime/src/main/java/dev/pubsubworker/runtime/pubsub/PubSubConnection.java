package dev.pubsubworker.runtime.pubsub;

import com.google.api.core.InternalApi;
import com.google.api.gax.core.CredentialsProvider;
import com.google.api.gax.core.NoCredentialsProvider;
import com.google.api.gax.grpc.GrpcTransportChannel;
import com.google.api.gax.rpc.FixedTransportChannelProvider;
import com.google.api.gax.rpc.TransportChannelProvider;
import com.google.cloud.pubsub.v1.Publisher;
import com.google.cloud.pubsub.v1.SubscriptionAdminSettings;
import com.google.cloud.pubsub.v1.TopicAdminSettings;
import com.google.pubsub.v1.TopicName;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How this process reaches Pub/Sub: a plaintext channel with no credentials to an emulator, or the
 * client libraries' defaults (Application Default Credentials, the regional endpoint) otherwise.
 * Owns the emulator channel; {@link #close()} shuts it down.
 *
 * <p>The emulator channel accepts what the client accepts from the real service: inbound messages
 * up to {@value #MAX_INBOUND_MESSAGE_BYTES} bytes (20 MiB, the {@code Subscriber}'s own setting;
 * Pub/Sub messages are at most 10 MB, and one pull response may carry several), metadata up to
 * {@value #MAX_INBOUND_METADATA_BYTES} bytes. gRPC's default of 4 MiB would make a large message or
 * batch fail every pull with RESOURCE_EXHAUSTED, which the client retries forever; a call on the
 * channel that ends with RESOURCE_EXHAUSTED is logged at WARN (at most every 30 s).
 */
@InternalApi("the worker's Pub/Sub channel and clients")
public final class PubSubConnection implements AutoCloseable {

  /** The largest inbound gRPC message on the emulator channel: the Subscriber's 20 MiB. */
  public static final int MAX_INBOUND_MESSAGE_BYTES = 20 * 1024 * 1024;

  /** The largest inbound metadata on the emulator channel: the Subscriber's 4 MiB. */
  public static final int MAX_INBOUND_METADATA_BYTES = 4 * 1024 * 1024;

  private static final Logger log = LoggerFactory.getLogger(PubSubConnection.class);
  private static final long WARN_EVERY_NANOS = TimeUnit.SECONDS.toNanos(30);

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
    return create(emulatorHost, interceptors, MAX_INBOUND_MESSAGE_BYTES);
  }

  /** As {@link #create(Optional)}, with the emulator channel's inbound message limit (tests). */
  static PubSubConnection create(Optional<String> emulatorHost, int maxInboundMessageBytes) {
    return create(emulatorHost, List.of(), maxInboundMessageBytes);
  }

  private static PubSubConnection create(
      Optional<String> emulatorHost,
      List<ClientInterceptor> interceptors,
      int maxInboundMessageBytes) {
    List<ClientInterceptor> list = List.copyOf(interceptors);
    return new PubSubConnection(
        emulatorHost
            .map(
                h ->
                    ManagedChannelBuilder.forTarget(h)
                        .usePlaintext()
                        .maxInboundMessageSize(maxInboundMessageBytes)
                        .maxInboundMetadataSize(MAX_INBOUND_METADATA_BYTES)
                        .intercept(list)
                        .intercept(new ResourceExhaustedWarning(h, maxInboundMessageBytes))
                        .build())
            .orElse(null),
        list);
  }

  /**
   * Logs a WARN when a call ends with RESOURCE_EXHAUSTED (a message or pull batch over the inbound
   * limit, or the emulator refusing a request), at most every 30 s: the client retries such pulls
   * on its own, so without this line the worker would loop in silence.
   */
  private static final class ResourceExhaustedWarning implements ClientInterceptor {
    private final String target;
    private final int limit;
    private final AtomicLong lastWarned = new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);

    ResourceExhaustedWarning(String target, int limit) {
      this.target = target;
      this.limit = limit;
    }

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(
        MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
      return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
        @Override
        public void start(Listener<R> listener, Metadata headers) {
          super.start(
              new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
                @Override
                public void onClose(Status status, Metadata trailers) {
                  if (status.getCode() == Status.Code.RESOURCE_EXHAUSTED) {
                    warn(method.getBareMethodName(), status);
                  }
                  super.onClose(status, trailers);
                }
              },
              headers);
        }
      };
    }

    private void warn(String method, Status status) {
      long now = System.nanoTime();
      long last = lastWarned.get();
      if (now - last < WARN_EVERY_NANOS || !lastWarned.compareAndSet(last, now)) {
        return;
      }
      log.warn(
          "Pub/Sub {} on the emulator at {} failed with RESOURCE_EXHAUSTED ({}); the client"
              + " retries, and nothing arrives while it lasts. A message or pull batch over the"
              + " channel's inbound limit of {} bytes, or the emulator refusing the request, does"
              + " this",
          method,
          target,
          status.getDescription(),
          limit);
    }
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
        .setMaxInboundMessageSize(MAX_INBOUND_MESSAGE_BYTES)
        .setMaxInboundMetadataSize(MAX_INBOUND_METADATA_BYTES)
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
