package dev.pubsubworker.runtime.pubsub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.api.gax.grpc.GrpcTransportChannel;
import com.google.api.gax.rpc.FixedTransportChannelProvider;
import com.google.cloud.pubsub.v1.AckReplyConsumer;
import com.google.cloud.pubsub.v1.Subscriber;
import com.google.pubsub.v1.ModifyAckDeadlineRequest;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.StreamingPullRequest;
import dev.pubsubworker.runtime.config.SubscriptionConfig;
import dev.pubsubworker.runtime.testing.TestPubSub;
import dev.pubsubworker.testservices.PubSubEmulator;
import dev.pubsubworker.testservices.SubscriptionFixture;
import dev.pubsubworker.testservices.SubscriptionSpec;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.MethodDescriptor;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What the real google-cloud-pubsub client sends when configured as {@link AckDeadlines} does, on
 * the embedded server: the stream ack deadline of the first StreamingPull request and the deadlines
 * of its ModifyAckDeadline calls. This is the client behaviour the README's time to reprocess after
 * a crash rests on; a client upgrade that changed it fails here.
 */
class AckDeadlinesTest {

  private final List<AutoCloseable> open = new CopyOnWriteArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (AutoCloseable c : open) {
      c.close();
    }
  }

  @Test
  void the_shipped_config_opens_streams_with_a_60s_deadline_and_extends_by_at_most_that()
      throws Exception {
    SubscriptionConfig config = CrashRecoveryTest.subscription("");
    Recording r = run(config, false);
    assertThat(r.streamAckDeadlineSeconds()).isEqualTo(60);
    assertThat(AckDeadlines.stream(config)).isEqualTo(Duration.ofSeconds(60));
    r.publishAndHold();
    // The receipt and (5 s before it lapses) the first extension: 10 s, the client's adaptive
    // deadline with no ack history, never above the configured maximum.
    await().atMost(Duration.ofSeconds(30)).until(() -> r.modackSeconds.size() >= 2);
    assertThat(r.modackSeconds).allSatisfy(s -> assertThat(s).isBetween(10, 60));
  }

  @Test
  void with_exactly_once_the_shipped_config_extends_by_exactly_60s() throws Exception {
    SubscriptionConfig config = CrashRecoveryTest.subscription("");
    Recording r = run(config, true);
    assertThat(r.streamAckDeadlineSeconds()).isEqualTo(60);
    r.publishAndHold();
    // min-ack-extension = max-ack-extension-per-call = 60s: the client gets the maximum alone and
    // applies its own exactly-once minimum, min(60 s, maximum), once the stream said exactly-once.
    await().atMost(Duration.ofSeconds(30)).until(() -> r.modackSeconds.contains(60));
    assertThat(r.modackSeconds).allSatisfy(s -> assertThat(s).isBetween(10, 60));
    assertThat(AckDeadlines.shortestExtension(config, true)).isEqualTo(Duration.ofSeconds(60));
  }

  @Test
  void with_exactly_once_a_lower_minimum_is_given_to_the_client() throws Exception {
    SubscriptionConfig config =
        CrashRecoveryTest.subscription("min-ack-extension = 20s, max-ack-extension-per-call = 45s");
    Recording r = run(config, true);
    assertThat(r.streamAckDeadlineSeconds()).isEqualTo(45);
    r.publishAndHold();
    await().atMost(Duration.ofSeconds(30)).until(() -> !r.modackSeconds.isEmpty());
    assertThat(r.modackSeconds).allSatisfy(s -> assertThat(s).isBetween(20, 45));
  }

  @Test
  void an_explicit_maximum_is_what_the_client_sends_as_the_stream_ack_deadline() throws Exception {
    // The old default: every message Pub/Sub handed a stream was leased for ten minutes until the
    // client's receipt for it.
    Recording r = run(CrashRecoveryTest.subscription("max-ack-extension-per-call = 600s"), false);
    assertThat(r.streamAckDeadlineSeconds()).isEqualTo(600);
  }

  /** A subscriber configured like the worker's, with its requests recorded. */
  private Recording run(SubscriptionConfig config, boolean exactlyOnce) {
    PubSubEmulator pubsub = TestPubSub.embedded();
    SubscriptionFixture fixture =
        pubsub.createSubscription(
            SubscriptionSpec.newBuilder().setExactlyOnceDelivery(exactlyOnce).build());
    Recording r = new Recording(pubsub, fixture);
    ManagedChannel channel =
        ManagedChannelBuilder.forTarget(pubsub.hostPort()).usePlaintext().intercept(r).build();
    open.add(
        () -> {
          channel.shutdownNow();
          channel.awaitTermination(10, TimeUnit.SECONDS);
        });
    Subscriber.Builder builder =
        Subscriber.newBuilder(
                fixture.subscription().toString(),
                (PubsubMessage m, AckReplyConsumer reply) -> r.held.add(reply))
            .setChannelProvider(
                FixedTransportChannelProvider.create(GrpcTransportChannel.create(channel)))
            .setCredentialsProvider(pubsub.credentialsProvider());
    Subscriber subscriber = AckDeadlines.apply(builder, config, exactlyOnce).build();
    subscriber.startAsync().awaitRunning();
    open.add(0, () -> subscriber.stopAsync().awaitTerminated(30, TimeUnit.SECONDS));
    open.add(0, () -> r.held.forEach(AckReplyConsumer::nack));
    await().atMost(Duration.ofSeconds(30)).until(() -> !r.streamRequests.isEmpty());
    return r;
  }

  private static final class Recording implements ClientInterceptor {

    final PubSubEmulator pubsub;
    final SubscriptionFixture fixture;
    final List<StreamingPullRequest> streamRequests = new CopyOnWriteArrayList<>();
    final List<Integer> modackSeconds = new CopyOnWriteArrayList<>();
    final BlockingQueue<AckReplyConsumer> held = new LinkedBlockingQueue<>();

    Recording(PubSubEmulator pubsub, SubscriptionFixture fixture) {
      this.pubsub = pubsub;
      this.fixture = fixture;
    }

    int streamAckDeadlineSeconds() {
      return streamRequests.get(0).getStreamAckDeadlineSeconds();
    }

    /** Publishes one message and waits until the receiver has it (and holds it, unanswered). */
    void publishAndHold() {
      pubsub.publish(fixture.topic(), "held");
      await().atMost(Duration.ofSeconds(30)).until(() -> !held.isEmpty());
    }

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(
        MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
      return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
        @Override
        public void sendMessage(Q message) {
          if (message instanceof StreamingPullRequest s) {
            streamRequests.add(s);
            // Deadlines in-stream count as well (the client sends them as unary calls today).
            s.getModifyDeadlineSecondsList().stream()
                .filter(seconds -> seconds > 0)
                .forEach(modackSeconds::add);
          } else if (message instanceof ModifyAckDeadlineRequest m
              && m.getAckDeadlineSeconds() > 0) {
            modackSeconds.add(m.getAckDeadlineSeconds());
          }
          super.sendMessage(message);
        }
      };
    }
  }
}
