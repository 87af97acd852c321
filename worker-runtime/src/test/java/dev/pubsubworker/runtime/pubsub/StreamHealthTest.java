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
 * manual clock: an outage is reported once it outlasts the settle time, a quick reconnect is not; a
 * stream that answers, or stays open on a connection for the settle time, ends it, but a call that
 * never reached a connection (failed at once, or still waiting) never does; the client's keep-alive
 * timeout is an error only where the server answers idle streams, and there silence proves nothing;
 * a stop's cancellation is no error.
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

  private static final Duration SETTLE = Duration.ofSeconds(2);

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
    assertThat(health.problems()).isEmpty();
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
  void a_stream_that_stays_open_on_a_connection_for_the_settle_time_ends_the_outage() {
    open().close(Status.UNAVAILABLE);
    time.advance(Duration.ofSeconds(3));
    assertThat(health.problems()).hasSize(1);
    open();
    time.advance(SETTLE);
    assertThat(health.problems()).isEmpty();
  }

  @Test
  void a_call_that_fails_before_its_first_request_is_a_failed_stream_never_an_up_one() {
    // What a channel in reconnect backoff does to every call: the close comes first.
    open().close(Status.UNAVAILABLE.withDescription("connection refused"));
    for (int i = 0; i < 10; i++) {
      time.advance(Duration.ofSeconds(1));
      failFast(Status.UNAVAILABLE.withDescription("connection refused"));
    }
    time.advance(Duration.ofSeconds(5));
    assertThat(health.problems())
        .as("no stream reached Pub/Sub in 15 s")
        .containsExactly(
            "Pub/Sub stream of subscription orders failing for 15.0s: UNAVAILABLE (connection"
                + " refused)");
    assertThat(events).filteredOn(e -> e.startsWith("error:")).hasSize(11);
  }

  @Test
  void a_call_waiting_for_a_connection_is_not_up_however_long_it_waits() {
    open().close(Status.UNAVAILABLE.withDescription("connection reset"));
    Stream waiting = openUnready();
    time.advance(Duration.ofSeconds(20));
    assertThat(health.problems())
        .containsExactly(
            "Pub/Sub stream of subscription orders failing for 20.0s: UNAVAILABLE (connection"
                + " reset)");
    waiting.ready();
    time.advance(SETTLE.minusMillis(1));
    assertThat(health.problems()).hasSize(1);
    time.advance(Duration.ofMillis(1));
    assertThat(health.problems()).as("settled on its connection").isEmpty();
  }

  @Test
  void a_subscription_is_not_up_until_its_first_stream_is() {
    assertThat(health.problems()).as("within the settle time").isEmpty();
    Stream first = openUnready();
    time.advance(Duration.ofSeconds(3));
    assertThat(health.problems())
        .containsExactly(
            "Pub/Sub stream of subscription orders not up for 3.0s: no stream has been answered"
                + " or stayed open for 2.0s on a connection");
    first.answer();
    assertThat(health.problems()).isEmpty();
  }

  @Test
  void the_keepalive_timeout_of_a_server_that_never_answers_idle_streams_is_no_error() {
    Stream idle = open();
    time.advance(Duration.ofSeconds(20));
    idle.clientGivesUp();
    time.advance(Duration.ofMillis(100));
    open();
    time.advance(Duration.ofSeconds(10));
    assertThat(health.problems()).isEmpty();
    assertThat(events).containsExactly("opened:orders", "opened:orders");
  }

  @Test
  void once_the_server_answered_an_idle_stream_only_an_answer_ends_an_outage() {
    Stream first = open();
    first.heartbeat();
    time.advance(Duration.ofSeconds(20));
    // The network drops every byte: the client hears nothing after its keep-alive and gives up.
    first.clientGivesUp();
    assertThat(events).containsExactly("opened:orders", "error:orders:UNAVAILABLE");
    Stream silent = open();
    time.advance(Duration.ofSeconds(20));
    assertThat(health.problems())
        .as("open on a connection, but silent: no proof on a server that answers idle streams")
        .containsExactly(
            "Pub/Sub stream of subscription orders failing for 20.0s: UNAVAILABLE (Keepalive"
                + " timeout with server)");
    silent.heartbeat();
    assertThat(health.problems()).isEmpty();
  }

  @Test
  void the_clients_own_cancellation_is_not_an_error() {
    Stream s = open();
    s.observed.cancel("subscriber stopping", Status.CANCELLED.asException());
    s.close(Status.CANCELLED.withDescription("subscriber stopping"));
    time.advance(Duration.ofSeconds(10));
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

  /** A started StreamingPull call whose first request went out, placed on a connection. */
  private Stream open() {
    Stream s = openUnready();
    s.ready();
    return s;
  }

  /** A StreamingPull call that fails at once, before its first request is sent. */
  private void failFast(Status status) {
    ScriptedCall raw = new ScriptedCall();
    ClientCall<StreamingPullRequest, StreamingPullResponse> observed =
        health.interceptor().interceptCall(STREAMING_PULL, CallOptions.DEFAULT, channel(raw));
    observed.start(new ClientCall.Listener<>() {}, new Metadata());
    raw.listener.onClose(status, new Metadata());
    observed.sendMessage(StreamingPullRequest.newBuilder().setSubscription(PATH).build());
  }

  /** A StreamingPull call through the interceptor, with its first request sent, not yet ready. */
  private Stream openUnready() {
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

    void ready() {
      call.listener.onReady();
    }

    void answer() {
      call.listener.onHeaders(new Metadata());
    }

    /** The server answers a keep-alive request: an empty response. */
    void heartbeat() {
      call.listener.onMessage(StreamingPullResponse.getDefaultInstance());
    }

    /** The client's keep-alive monitor closes the stream: no answer within 15 s. */
    void clientGivesUp() {
      observed.cancel(
          null, Status.UNAVAILABLE.withDescription("Keepalive timeout with server").asException());
      close(Status.CANCELLED.withDescription("Call cancelled without message"));
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
