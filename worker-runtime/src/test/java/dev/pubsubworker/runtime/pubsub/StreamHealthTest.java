package dev.pubsubworker.runtime.pubsub;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.pubsub.v1.StreamingPullRequest;
import com.google.pubsub.v1.StreamingPullResponse;
import dev.pubsubworker.testkit.ManualTime;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.io.InputStream;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * {@link StreamHealth}'s rules, driving its interceptor with scripted StreamingPull calls on a
 * manual clock: an outage is reported once it outlasts {@link StreamHealth#SETTLE}, a quick
 * reconnect is not, a stream that answers or stays open ends it, and a stop's cancellation is no
 * error.
 */
class StreamHealthTest {

  private static final String PATH = "projects/p/subscriptions/orders-sub";
  private static final MethodDescriptor<StreamingPullRequest, StreamingPullResponse>
      STREAMING_PULL =
          MethodDescriptor.<StreamingPullRequest, StreamingPullResponse>newBuilder()
              .setType(MethodDescriptor.MethodType.BIDI_STREAMING)
              .setFullMethodName("google.pubsub.v1.Subscriber/StreamingPull")
              .setRequestMarshaller(new Unused<>())
              .setResponseMarshaller(new Unused<>())
              .build();

  private final ManualTime time = new ManualTime();
  private final List<String> events = new CopyOnWriteArrayList<>();
  private final StreamHealth health =
      new StreamHealth(
          time.clock(),
          new DispatchListener() {
            @Override
            public void streamOpened(String subscription) {
              events.add("opened:" + subscription);
            }

            @Override
            public void streamError(String subscription, String code) {
              events.add("error:" + subscription + ":" + code);
            }
          });

  StreamHealthTest() {
    health.register(PATH, "orders");
  }

  @Test
  void a_reconnect_within_the_settle_time_is_not_reported() {
    Stream first = open();
    time.advance(Duration.ofMinutes(5));
    first.close(Status.UNAVAILABLE.withDescription("server closed the stream"));
    Stream second = open();
    time.advance(Duration.ofSeconds(1));
    assertThat(health.problems()).isEmpty();
    time.advance(Duration.ofSeconds(5));
    assertThat(health.problems()).as("the new stream stayed open: up").isEmpty();
    assertThat(second.call.cancelled).isFalse();
    assertThat(events)
        .containsExactly("opened:orders", "error:orders:UNAVAILABLE", "opened:orders");
  }

  @Test
  void an_outage_is_reported_after_the_settle_time_until_a_stream_answers() {
    open().close(Status.UNAVAILABLE.withDescription("io exception\nsecond line"));
    time.advance(Duration.ofMillis(100));
    open().close(Status.UNAVAILABLE.withDescription("io exception"));
    time.advance(Duration.ofMillis(1_900));
    assertThat(health.problems())
        .containsExactly(
            "Pub/Sub stream of subscription orders failing for 2.0s: UNAVAILABLE (io exception)");

    Stream retry = open();
    time.advance(Duration.ofMillis(500));
    assertThat(health.problems()).as("open, but neither answered nor settled yet").hasSize(1);
    retry.answer();
    assertThat(health.problems()).isEmpty();
  }

  @Test
  void a_stream_that_stays_open_for_the_settle_time_ends_the_outage() {
    open().close(Status.UNAVAILABLE);
    time.advance(Duration.ofSeconds(3));
    assertThat(health.problems()).hasSize(1);
    open();
    time.advance(StreamHealth.SETTLE);
    assertThat(health.problems()).isEmpty();
  }

  @Test
  void the_clients_own_cancellation_is_not_an_error() {
    Stream s = open();
    s.observed.cancel("subscriber stopping", null);
    s.close(Status.CANCELLED.withDescription("subscriber stopping"));
    time.advance(Duration.ofSeconds(10));
    assertThat(health.problems()).isEmpty();
    assertThat(events).containsExactly("opened:orders");
  }

  @Test
  void other_methods_pass_through_untouched() {
    MethodDescriptor<StreamingPullRequest, StreamingPullResponse> pull =
        STREAMING_PULL.toBuilder().setFullMethodName("google.pubsub.v1.Subscriber/Pull").build();
    ScriptedCall raw = new ScriptedCall();
    ClientCall<StreamingPullRequest, StreamingPullResponse> call =
        health.interceptor().interceptCall(pull, CallOptions.DEFAULT, channel(raw));
    assertThat(call).isSameAs(raw);
  }

  /** A StreamingPull call through the interceptor, with its first request sent. */
  private Stream open() {
    ScriptedCall raw = new ScriptedCall();
    ClientCall<StreamingPullRequest, StreamingPullResponse> observed =
        health.interceptor().interceptCall(STREAMING_PULL, CallOptions.DEFAULT, channel(raw));
    observed.start(new ClientCall.Listener<>() {}, new Metadata());
    observed.sendMessage(StreamingPullRequest.newBuilder().setSubscription(PATH).build());
    return new Stream(raw, observed);
  }

  private record Stream(
      ScriptedCall call, ClientCall<StreamingPullRequest, StreamingPullResponse> observed) {
    void close(Status status) {
      call.listener.onClose(status, new Metadata());
    }

    void answer() {
      call.listener.onHeaders(new Metadata());
    }
  }

  private static Channel channel(ScriptedCall call) {
    return new Channel() {
      @Override
      @SuppressWarnings("unchecked") // only ever asked for the StreamingPull descriptor's types
      public <Q, R> ClientCall<Q, R> newCall(MethodDescriptor<Q, R> method, CallOptions options) {
        return (ClientCall<Q, R>) call;
      }

      @Override
      public String authority() {
        return "pubsub.test";
      }
    };
  }

  /** The transport side of one call: the test plays the server through its listener. */
  private static final class ScriptedCall
      extends ClientCall<StreamingPullRequest, StreamingPullResponse> {
    Listener<StreamingPullResponse> listener;
    boolean cancelled;

    @Override
    public void start(Listener<StreamingPullResponse> responseListener, Metadata headers) {
      listener = responseListener;
    }

    @Override
    public void request(int numMessages) {}

    @Override
    public void cancel(String message, Throwable cause) {
      cancelled = true;
    }

    @Override
    public void halfClose() {}

    @Override
    public void sendMessage(StreamingPullRequest message) {}
  }

  /** The descriptor needs marshallers; nothing here goes over a wire. */
  private static final class Unused<T> implements MethodDescriptor.Marshaller<T> {
    @Override
    public InputStream stream(T value) {
      throw new UnsupportedOperationException();
    }

    @Override
    public T parse(InputStream stream) {
      throw new UnsupportedOperationException();
    }
  }
}
