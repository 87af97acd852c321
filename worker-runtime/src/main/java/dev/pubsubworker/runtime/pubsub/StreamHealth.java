package dev.pubsubworker.runtime.pubsub;

import com.google.pubsub.v1.StreamingPullRequest;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether each subscription's streaming pull is up, seen from the gRPC calls themselves: a {@link
 * ClientInterceptor} on the Pub/Sub channel observes every {@code StreamingPull} call (which
 * subscription its first request names, whether the server answered, how it closed). The client
 * library retries a failed stream on its own, forever for retryable codes, so its {@code
 * Subscriber} keeps "running" through an outage; this is the signal that it is not pulling.
 *
 * <p>A subscription is <b>failing</b> from the moment one of its streams closes with an error until
 * a later stream is up: it got response headers or a message, or has stayed open for {@link
 * #SETTLE} (a server that refuses a stream does so within milliseconds; Pub/Sub need not send
 * anything on a healthy stream with no messages). An error is reported only once it is older than
 * {@code SETTLE} without a stream up since, so the routine reconnect after a server closes a stream
 * does not flap readiness. A stream cancelled by the client itself (a stop) is not an error.
 *
 * <p>Every stream opened and every stream error is reported to the {@link DispatchListener}
 * (metrics). Thread-safe; no I/O.
 */
public final class StreamHealth {

  /** How long a new stream must stay open (without an answer) to count as up. */
  public static final Duration SETTLE = Duration.ofSeconds(2);

  private static final Logger log = LoggerFactory.getLogger(StreamHealth.class);
  private static final String STREAMING_PULL = "google.pubsub.v1.Subscriber/StreamingPull";

  private final Clock clock;
  private final DispatchListener listener;
  private final Map<String, String> idsByPath = new ConcurrentHashMap<>();
  private final Map<String, State> states = new ConcurrentHashMap<>();

  /**
   * @param clock the clock ages are measured on
   * @param listener told of every stream opened and every stream error
   */
  public StreamHealth(Clock clock, DispatchListener listener) {
    this.clock = clock;
    this.listener = listener;
  }

  /**
   * Names the subscription whose full path is {@code path} as {@code id} in reasons and metrics.
   */
  void register(String path, String id) {
    idsByPath.put(path, id);
    states.putIfAbsent(id, new State(id));
  }

  /** The interceptor to install on the channel the subscribers use. */
  public ClientInterceptor interceptor() {
    return new Interceptor();
  }

  /**
   * Why some subscription's stream is not up, one entry per failing subscription (empty when every
   * stream is up or reconnecting within {@link #SETTLE}).
   */
  public List<String> problems() {
    Instant now = clock.instant();
    List<String> problems = new ArrayList<>();
    for (State s : states.values()) {
      s.problem(now).ifPresent(problems::add);
    }
    problems.sort(null);
    return problems;
  }

  private State state(String path) {
    String id = idsByPath.getOrDefault(path, path);
    return states.computeIfAbsent(id, State::new);
  }

  /** One subscription's latest stream and its last error. */
  private final class State {
    private final String id;
    private Stream current;
    private Status lastError;
    private Instant failingSince;
    private boolean reportedFailing;

    State(String id) {
      this.id = id;
    }

    synchronized Stream opened() {
      current = new Stream(this, clock.instant());
      return current;
    }

    synchronized void closed(Stream stream, Status status) {
      if (status.isOk() || stream.cancelledByClient || status.getCode() == Status.Code.CANCELLED) {
        return;
      }
      lastError = status;
      if (failingSince == null) {
        failingSince = clock.instant();
      }
    }

    synchronized java.util.Optional<String> problem(Instant now) {
      if (failingSince == null) {
        return java.util.Optional.empty();
      }
      Stream s = current;
      boolean recovered =
          s != null
              && !s.closed
              && s.openedAt.isAfter(failingSince.minusMillis(1))
              && (s.answered || !now.isBefore(s.openedAt.plus(SETTLE)));
      if (recovered) {
        if (reportedFailing) {
          log.info("Pub/Sub stream of subscription {} is up again", id);
        }
        failingSince = null;
        lastError = null;
        reportedFailing = false;
        return java.util.Optional.empty();
      }
      if (now.isBefore(failingSince.plus(SETTLE))) {
        return java.util.Optional.empty();
      }
      if (!reportedFailing) {
        reportedFailing = true;
        log.warn(
            "Pub/Sub stream of subscription {} is failing: {}; the client keeps reconnecting",
            id,
            describe(lastError));
      }
      return java.util.Optional.of(
          "Pub/Sub stream of subscription "
              + id
              + " failing for "
              + String.format(
                  Locale.ROOT, "%.1fs", Duration.between(failingSince, now).toMillis() / 1000.0)
              + ": "
              + describe(lastError));
    }
  }

  private static String describe(Status status) {
    String text = status.getCode().name();
    if (status.getDescription() != null) {
      text += " (" + status.getDescription().lines().findFirst().orElse("") + ")";
    }
    return text;
  }

  /** One StreamingPull call. */
  private static final class Stream {
    final State state;
    final Instant openedAt;
    volatile boolean answered;
    volatile boolean closed;
    volatile boolean cancelledByClient;

    Stream(State state, Instant openedAt) {
      this.state = state;
      this.openedAt = openedAt;
    }
  }

  private final class Interceptor implements ClientInterceptor {
    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(
        MethodDescriptor<Q, R> method, CallOptions callOptions, Channel next) {
      ClientCall<Q, R> call = next.newCall(method, callOptions);
      if (!STREAMING_PULL.equals(method.getFullMethodName())) {
        return call;
      }
      return new ObservedCall<>(call);
    }
  }

  private final class ObservedCall<Q, R>
      extends ForwardingClientCall.SimpleForwardingClientCall<Q, R> {
    private volatile Stream stream;
    private volatile boolean answeredEarly;

    ObservedCall(ClientCall<Q, R> delegate) {
      super(delegate);
    }

    @Override
    public void start(Listener<R> responseListener, Metadata headers) {
      super.start(
          new ForwardingClientCallListener.SimpleForwardingClientCallListener<R>(responseListener) {
            @Override
            public void onHeaders(Metadata h) {
              answered();
              super.onHeaders(h);
            }

            @Override
            public void onMessage(R message) {
              answered();
              super.onMessage(message);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
              Stream s = stream;
              if (s != null) {
                s.closed = true;
                s.state.closed(s, status);
                if (!status.isOk() && !s.cancelledByClient) {
                  listener.streamError(s.state.id, status.getCode().name());
                }
              }
              super.onClose(status, trailers);
            }
          },
          headers);
    }

    private void answered() {
      Stream s = stream;
      if (s != null) {
        s.answered = true;
      } else {
        answeredEarly = true;
      }
    }

    @Override
    public void sendMessage(Q message) {
      if (stream == null && message instanceof StreamingPullRequest r) {
        State state = state(r.getSubscription());
        Stream s = state.opened();
        s.answered = answeredEarly;
        stream = s;
        listener.streamOpened(state.id);
      }
      super.sendMessage(message);
    }

    @Override
    public void cancel(String message, Throwable cause) {
      Stream s = stream;
      if (s != null) {
        s.cancelledByClient = true;
      }
      super.cancel(message, cause);
    }
  }
}
