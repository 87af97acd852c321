package dev.pubsubworker.testservices;

import com.google.api.gax.core.CredentialsProvider;
import com.google.api.gax.core.NoCredentialsProvider;
import com.google.api.gax.grpc.GrpcCallContext;
import com.google.api.gax.grpc.GrpcTransportChannel;
import com.google.api.gax.rpc.DeadlineExceededException;
import com.google.api.gax.rpc.FixedTransportChannelProvider;
import com.google.api.gax.rpc.TransportChannelProvider;
import com.google.cloud.pubsub.v1.MessageReceiver;
import com.google.cloud.pubsub.v1.MessageReceiverWithAckResponse;
import com.google.cloud.pubsub.v1.Publisher;
import com.google.cloud.pubsub.v1.Subscriber;
import com.google.cloud.pubsub.v1.SubscriptionAdminClient;
import com.google.cloud.pubsub.v1.SubscriptionAdminSettings;
import com.google.cloud.pubsub.v1.TopicAdminClient;
import com.google.cloud.pubsub.v1.TopicAdminSettings;
import com.google.protobuf.ByteString;
import com.google.pubsub.v1.AcknowledgeRequest;
import com.google.pubsub.v1.DeadLetterPolicy;
import com.google.pubsub.v1.PublishResponse;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.PullRequest;
import com.google.pubsub.v1.ReceivedMessage;
import com.google.pubsub.v1.RetryPolicy;
import com.google.pubsub.v1.Subscription;
import com.google.pubsub.v1.SubscriptionName;
import com.google.pubsub.v1.TopicName;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Google's Pub/Sub emulator, with helpers that use the real {@code google-cloud-pubsub} client over
 * a plaintext gRPC channel and no credentials.
 *
 * <p>One emulator serves every test in the JVM: keep tests apart with fresh topics and
 * subscriptions ({@link #createTopic(String)}, {@link #createSubscription(SubscriptionSpec)}),
 * which get unique names. The channel and the admin clients are shared and closed at JVM exit: do
 * not close them. Remember that a unary Pull on an empty subscription waits long on the emulator;
 * {@link #pull(SubscriptionName, int, Duration)} always has a deadline.
 *
 * <p>Thread-safe. The helpers throw the client's {@link com.google.api.gax.rpc.ApiException}s
 * unchanged.
 */
public final class PubSubEmulator {

  private final HostPort hostPort;
  private final String projectId;
  private final ServiceSource source;
  private ManagedChannel channel;
  private TransportChannelProvider channelProvider;
  private TopicAdminClient topicAdmin;
  private SubscriptionAdminClient subscriptionAdmin;

  PubSubEmulator(HostPort hostPort, String projectId, ServiceSource source) {
    this.hostPort = Objects.requireNonNull(hostPort);
    this.projectId = Objects.requireNonNull(projectId);
    this.source = Objects.requireNonNull(source);
  }

  /**
   * The same helpers for a Pub/Sub server this JVM runs itself (the in-process embedded server of
   * module {@code pubsub-embedded}, say), with source {@link ServiceSource#EMBEDDED} and the test
   * services' project id. {@code server} is closed once at JVM exit, after the clients this object
   * opened; the caller must not close it earlier while the helpers are in use.
   *
   * @param hostPort where the server listens, {@code "host:port"}
   * @throws IllegalArgumentException naming the value when it is not {@code host:port}
   */
  public static PubSubEmulator inProcess(String hostPort, AutoCloseable server) {
    PubSubEmulator pubsub =
        new PubSubEmulator(
            HostPort.parse(hostPort), ServiceRegistry.PROJECT_ID, ServiceSource.EMBEDDED);
    // Registered before any client: the shutdown hook closes newest first.
    ShutdownActions.register("Pub/Sub server at " + hostPort, Objects.requireNonNull(server));
    return pubsub;
  }

  /**
   * Where the emulator listens, {@code "host:port"}: the value for {@code PUBSUB_EMULATOR_HOST}.
   */
  public String hostPort() {
    return hostPort.toString();
  }

  /** The project to create topics and subscriptions in (the emulator accepts any). */
  public String projectId() {
    return projectId;
  }

  /** Where this emulator came from. */
  public ServiceSource source() {
    return source;
  }

  /**
   * A channel provider for the emulator (plaintext, shared, never closed by the clients that use
   * it), for {@code setChannelProvider} / {@code setTransportChannelProvider} of any client.
   */
  public synchronized TransportChannelProvider channelProvider() {
    if (channelProvider == null) {
      channel = ManagedChannelBuilder.forTarget(hostPort.toString()).usePlaintext().build();
      ManagedChannel opened = channel;
      ShutdownActions.register(
          "Pub/Sub channel to " + hostPort,
          () -> {
            opened.shutdownNow();
            opened.awaitTermination(5, TimeUnit.SECONDS);
          });
      channelProvider = FixedTransportChannelProvider.create(GrpcTransportChannel.create(channel));
    }
    return channelProvider;
  }

  /** No credentials: the emulator takes none. */
  public CredentialsProvider credentialsProvider() {
    return NoCredentialsProvider.create();
  }

  /** The shared topic admin client (also publishes); closed at JVM exit. */
  public synchronized TopicAdminClient topicAdmin() {
    if (topicAdmin == null) {
      try {
        topicAdmin =
            TopicAdminClient.create(
                TopicAdminSettings.newBuilder()
                    .setTransportChannelProvider(channelProvider())
                    .setCredentialsProvider(credentialsProvider())
                    .build());
      } catch (IOException e) {
        throw new UncheckedIOException("could not create a TopicAdminClient for " + hostPort, e);
      }
      ShutdownActions.register("Pub/Sub topic admin client", topicAdmin);
    }
    return topicAdmin;
  }

  /** The shared subscription admin client (also pulls and acks); closed at JVM exit. */
  public synchronized SubscriptionAdminClient subscriptionAdmin() {
    if (subscriptionAdmin == null) {
      try {
        subscriptionAdmin =
            SubscriptionAdminClient.create(
                SubscriptionAdminSettings.newBuilder()
                    .setTransportChannelProvider(channelProvider())
                    .setCredentialsProvider(credentialsProvider())
                    .build());
      } catch (IOException e) {
        throw new UncheckedIOException(
            "could not create a SubscriptionAdminClient for " + hostPort, e);
      }
      ShutdownActions.register("Pub/Sub subscription admin client", subscriptionAdmin);
    }
    return subscriptionAdmin;
  }

  /**
   * Creates a topic named {@link TestServices#uniqueName(String) uniqueName(prefix)}.
   *
   * @throws IllegalArgumentException when the prefix is not a valid name prefix
   */
  public TopicName createTopic(String prefix) {
    TopicName topic = TopicName.of(projectId, TestServices.uniqueName(prefix));
    topicAdmin().createTopic(topic);
    return topic;
  }

  /**
   * Creates a fresh topic and a subscription on it as {@code spec} says; with a dead-letter policy
   * also a dead-letter topic and a subscription on that.
   */
  public SubscriptionFixture createSubscription(SubscriptionSpec spec) {
    String prefix = spec.namePrefix();
    TopicName topic = createTopic(prefix);
    SubscriptionName subscription = SubscriptionName.of(projectId, TestServices.uniqueName(prefix));
    Subscription.Builder request =
        Subscription.newBuilder()
            .setName(subscription.toString())
            .setTopic(topic.toString())
            .setAckDeadlineSeconds(Math.toIntExact(spec.ackDeadline().toSeconds()))
            .setEnableExactlyOnceDelivery(spec.exactlyOnceDelivery())
            .setEnableMessageOrdering(spec.messageOrdering());
    Optional<TopicName> deadLetterTopic = Optional.empty();
    Optional<SubscriptionName> deadLetterSubscription = Optional.empty();
    if (spec.deadLetterMaxDeliveryAttempts().isPresent()) {
      TopicName deadLetters = createTopic(prefix + "_dead");
      SubscriptionName deadLetterReader =
          SubscriptionName.of(projectId, TestServices.uniqueName(prefix + "_dead"));
      subscriptionAdmin()
          .createSubscription(
              Subscription.newBuilder()
                  .setName(deadLetterReader.toString())
                  .setTopic(deadLetters.toString())
                  .setAckDeadlineSeconds(
                      Math.toIntExact(SubscriptionSpec.DEFAULT_ACK_DEADLINE.toSeconds()))
                  .build());
      request.setDeadLetterPolicy(
          DeadLetterPolicy.newBuilder()
              .setDeadLetterTopic(deadLetters.toString())
              .setMaxDeliveryAttempts(spec.deadLetterMaxDeliveryAttempts().getAsInt()));
      deadLetterTopic = Optional.of(deadLetters);
      deadLetterSubscription = Optional.of(deadLetterReader);
    }
    spec.retryBackoff()
        .ifPresent(
            backoff ->
                request.setRetryPolicy(
                    RetryPolicy.newBuilder()
                        .setMinimumBackoff(protobuf(backoff.minimum()))
                        .setMaximumBackoff(protobuf(backoff.maximum()))));
    subscriptionAdmin().createSubscription(request.build());
    return new SubscriptionFixture(
        topic, subscription, deadLetterTopic, deadLetterSubscription, spec);
  }

  /** Publishes one message and returns its message id. */
  public String publish(TopicName topic, PubsubMessage message) {
    PublishResponse response = topicAdmin().publish(topic, List.of(message));
    return response.getMessageIds(0);
  }

  /** Publishes {@code data} (UTF-8) as one message and returns its message id. */
  public String publish(TopicName topic, String data) {
    return publish(
        topic,
        PubsubMessage.newBuilder()
            .setData(ByteString.copyFrom(data, StandardCharsets.UTF_8))
            .build());
  }

  /**
   * One unary Pull of up to {@code maxMessages}, waiting at most {@code deadline}: what is there
   * (possibly fewer), or an empty list when nothing came in time. Messages are not acknowledged.
   *
   * @throws IllegalArgumentException unless {@code maxMessages > 0} and {@code deadline > 0}
   */
  public List<ReceivedMessage> pull(
      SubscriptionName subscription, int maxMessages, Duration deadline) {
    if (maxMessages <= 0) {
      throw new IllegalArgumentException("maxMessages must be > 0, but was " + maxMessages);
    }
    if (deadline.isNegative() || deadline.isZero()) {
      throw new IllegalArgumentException("deadline must be > 0, but was " + deadline);
    }
    PullRequest request =
        PullRequest.newBuilder()
            .setSubscription(subscription.toString())
            .setMaxMessages(maxMessages)
            .build();
    try {
      return subscriptionAdmin()
          .pullCallable()
          .call(request, GrpcCallContext.createDefault().withTimeoutDuration(deadline))
          .getReceivedMessagesList();
    } catch (DeadlineExceededException e) {
      return List.of();
    }
  }

  /** Acknowledges the given ack ids (from {@link #pull}); a no-op for none. */
  public void acknowledge(SubscriptionName subscription, Collection<String> ackIds) {
    if (ackIds.isEmpty()) {
      return;
    }
    subscriptionAdmin()
        .acknowledgeCallable()
        .call(
            AcknowledgeRequest.newBuilder()
                .setSubscription(subscription.toString())
                .addAllAckIds(ackIds)
                .build());
  }

  /**
   * A {@link Publisher} builder for {@code topic} wired to the emulator; set batching or ordering
   * and {@code build()}. The caller shuts the publisher down.
   */
  public Publisher.Builder newPublisher(TopicName topic) {
    return Publisher.newBuilder(topic)
        .setChannelProvider(channelProvider())
        .setCredentialsProvider(credentialsProvider());
  }

  /**
   * A streaming-pull {@link Subscriber} builder for {@code subscription} wired to the emulator; set
   * flow control or ack-extension limits and {@code build()}. The caller starts and stops it.
   */
  public Subscriber.Builder newSubscriber(SubscriptionName subscription, MessageReceiver receiver) {
    return Subscriber.newBuilder(subscription.toString(), receiver)
        .setChannelProvider(channelProvider())
        .setCredentialsProvider(credentialsProvider());
  }

  /**
   * A streaming-pull {@link Subscriber} builder whose receiver sees each ack's {@code AckResponse}
   * (meaningful on subscriptions with exactly-once delivery: a late or otherwise failed ack
   * completes with a non-{@code SUCCESSFUL} response); see {@link #newSubscriber(SubscriptionName,
   * MessageReceiver)}.
   */
  public Subscriber.Builder newSubscriberWithAckResponse(
      SubscriptionName subscription, MessageReceiverWithAckResponse receiver) {
    return Subscriber.newBuilder(subscription.toString(), receiver)
        .setChannelProvider(channelProvider())
        .setCredentialsProvider(credentialsProvider());
  }

  /** The address and the source. */
  @Override
  public String toString() {
    return "Pub/Sub emulator " + hostPort + " (" + source.label() + ")";
  }

  private static com.google.protobuf.Duration protobuf(Duration duration) {
    return com.google.protobuf.Duration.newBuilder()
        .setSeconds(duration.getSeconds())
        .setNanos(duration.getNano())
        .build();
  }
}
