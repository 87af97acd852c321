package dev.pubsubworker.runtime.pubsub;

import com.google.api.core.InternalApi;
import com.google.pubsub.v1.StreamingPullRequest;
import com.google.pubsub.v1.StreamingPullResponse;
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
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether each subscription's streaming pull is up, seen from the gRPC calls themselves: a {@link
 * ClientInterceptor} on the Pub/Sub channel observes every {@code StreamingPull} call (which
 * subscription its first request names, whether it reached a connection, whether the server
 * answered, how it closed). The client library retries a failed stream on its own, forever for
 * retryable codes, so its {@code Subscriber} keeps "running" through an outage; this is the signal
 * that it is not pulling.
 *
 * <p>A stream is <b>up</b> once the server answered it: response headers or a response. The client
 * sends a keep-alive request on every new stream at once and every 30 s after, and Pub/Sub answers
 * each with an empty response, so a healthy stream answers within moments even when there is
 * nothing to deliver. A server that answers nothing on an idle stream (Google's emulator, the
 * embedded server) cannot show that; for those, a stream also counts as up once it has stayed open
 * for the settle time <em>after it started</em>, meaning gRPC placed it on a connection ({@code
 * onReady}). A call still waiting for a connection, or one that failed before it had one (what a
 * channel in reconnect backoff does to every call), never counts. Once a subscription's server has
 * answered an idle stream (an empty response), silence is no evidence any more: from then on only
 * an answer makes a stream up.
 *
 * <p>A subscription is <b>failing</b> from the moment one of its streams closes with an error (or,
 * at first, from when it was registered) until a stream opened since is up. An error is reported
 * only once it is older than the settle time without a stream up since, so the routine reconnect
 * after a server closes a stream does not flap readiness. Not errors: a stream the client cancels
 * to stop, one that ends with OK, and the client's own keep-alive timeout (it closes a stream whose
 * server did not answer its keep-alive request within 15 s) on a server that never answers idle
 * streams, for which that is how every idle stream ends. On a server known to answer, that timeout
 * is an error: the server went silent.
 *
 * <p>Every stream opened and every stream error is reported to the {@link DispatchListener}
 * (metrics). Thread-safe; no I/O.
 */
@InternalApi("the stream watch behind readiness")
public final class StreamHealth {

  /**
   * The default settle time ({@code observability.pubsub-stream-settle-time}): how long a failure
   * may last before it is reported, and how long a stream the server has not answered must stay
   * open after it started to count as up.
   */
  public static final Duration DEFAULT_SETTLE = Duration.ofSeconds(2);

  private static final Logger log = LoggerFactory.getLogger(StreamHealth.class);
  private static final String STREAMING_PULL = "google.pubsub.v1.Subscriber/StreamingPull";

  private final Clock clock;
  private final DispatchListener listener;
  private final Duration settle;
  private final Map<String, String> idsByPath = new ConcurrentHashMap<>();
  private final Map<String, State> states = new ConcurrentHashMap<>();

  /**
   * With the {@link #DEFAULT_SETTLE default settle time}.
   *
   * @param clock the clock ages are measured on
   * @param listener told of every stream opened and every stream error
   */
  public StreamHealth(Clock clock, DispatchListener listener) {
    this(clock, listener, DEFAULT_SETTLE);
  }

  /**
   * @param clock the clock ages are measured on
   * @param listener told of every stream opened and every stream error
   * @param settle how long a failure may last before it is reported, and how long a started stream
   *     the server has not answered must stay open to count as up; positive
   * @throws IllegalArgumentException if {@code settle} is not positive
   */
  public StreamHealth(Clock clock, DispatchListener listener, Duration settle) {
    if (settle.isZero() || settle.isNegative()) {
      throw new IllegalArgumentException("settle must be positive, but was " + settle);
    }
    this.clock = clock;
    this.listener = listener;
    this.settle = settle;
  }

  /**
   * Names the subscription whose full path is {@code path} as {@code id} in reasons and metrics.
   * Until one of its streams is up, the subscription counts as not up yet (reported once that has
   * lasted the settle time).
   */
  void register(String path, String id) {
    idsByPath.put(path, id);
    states.computeIfAbsent(id, State::new);
  }

  /** The interceptor to install on the channel the subscribers use. */
  public ClientInterceptor interceptor() {
    return new Interceptor();
  }

  /**
   * Why some subscription's stream is not up, one entry per failing subscription (empty when every
   * stream is up or reconnecting within the settle time).
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

  /** One subscription's open streams and its failure, if it has one. */
  private final class State {
    private final String id;
    private final Set<Stream> open = new LinkedHashSet<>();
    private Status lastError;
    private Instant failingSince;
    private boolean reportedFailing;

    /** Whether its server has answered an idle stream (an empty response): silence is no proof. */
    private volatile boolean answersIdleStreams;

    State(String id) {
      this.id = id;
      this.failingSince = clock.instant(); // not up until a stream is
    }

    synchronized void opened(Stream stream) {
      open.add(stream);
    }

    /**
     * A stream of this subscription ended.
     *
     * @return the error it counts as, or null if it is none
     */
    synchronized Status closed(Stream stream, Status status) {
      refresh(clock.instant()); // the stream may have been up until now
      open.remove(stream);
      Status error = error(stream, status);
      if (error == null) {
        return null;
      }
      lastError = error;
      if (failingSince == null) {
        failingSince = clock.instant();
      }
      return error;
    }

    private Status error(Stream stream, Status status) {
      Status cancelCause = stream.cancelCause;
      if (stream.cancelledByClient) {
        // The client gave up on a server that did not answer its keep-alive in time: an error only
        // where the server is known to answer idle streams (elsewhere every idle stream ends so).
        return cancelCause != null
                && cancelCause.getCode() != Status.Code.CANCELLED
                && answersIdleStreams
            ? cancelCause
            : null;
      }
      if (status.isOk() || status.getCode() == Status.Code.CANCELLED) {
        return null;
      }
      return status;
    }

    /** A stream of this subscription got an answer. */
    synchronized void answered() {
      refresh(clock.instant());
    }

    /** Ends the failure if a stream opened since it began is up at {@code now}. */
    private void refresh(Instant now) {
      if (failingSince == null) {
        return;
      }
      for (Stream s : open) {
        if (!s.openedAt.isBefore(failingSince.minusMillis(1)) && isUp(s, now)) {
          if (reportedFailing) {
            log.info("Pub/Sub stream of subscription {} is up again", id);
          }
          failingSince = null;
          lastError = null;
          reportedFailing = false;
          return;
        }
      }
    }

    synchronized Optional<String> problem(Instant now) {
      refresh(now);
      if (failingSince == null) {
        return Optional.empty();
      }
      if (now.isBefore(failingSince.plus(settle))) {
        return Optional.empty();
      }
      String since = seconds(Duration.between(failingSince, now));
      if (lastError == null) {
        return Optional.of(
            "Pub/Sub stream of subscription "
                + id
                + " not up for "
                + since
                + ": "
                + (open.isEmpty()
                    ? "no stream open"
                    : answersIdleStreams
                        ? "Pub/Sub has not answered"
                        : "no stream has been answered or stayed open for "
                            + seconds(settle)
                            + " on a connection"));
      }
      if (!reportedFailing) {
        reportedFailing = true;
        log.warn(
            "Pub/Sub stream of subscription {} is failing: {}; the client keeps reconnecting",
            id,
            describe(lastError));
      }
      return Optional.of(
          "Pub/Sub stream of subscription "
              + id
              + " failing for "
              + since
              + ": "
              + describe(lastError));
    }

    private boolean isUp(Stream s, Instant now) {
      if (s.answered) {
        return true;
      }
      Instant ready = s.readyAt;
      return !answersIdleStreams && ready != null && !now.isBefore(ready.plus(settle));
    }
  }

  private static String seconds(Duration d) {
    return String.format(Locale.ROOT, "%.1fs", d.toMillis() / 1000.0);
  }

  private static String describe(Status status) {
    String text = status.getCode().name();
    if (status.getDescription() != null) {
      text += " (" + status.getDescription().lines().findFirst().orElse("") + ")";
    }
    return text;
  }

  /**
   * One StreamingPull call, from its start. Its subscription is known from its first request, which
   * may come after the call already failed (a channel in reconnect backoff fails calls at once).
   */
  private static final class Stream {
    final Instant openedAt;
    volatile State state;
    volatile Instant readyAt;
    volatile boolean answered;
    volatile boolean answeredIdle;
    volatile Status closedWith;
    volatile boolean cancelledByClient;
    volatile Status cancelCause;

    Stream(Instant openedAt) {
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
    private final Stream stream = new Stream(clock.instant());

    ObservedCall(ClientCall<Q, R> delegate) {
      super(delegate);
    }

    @Override
    public void start(Listener<R> responseListener, Metadata headers) {
      super.start(
          new ForwardingClientCallListener.SimpleForwardingClientCallListener<R>(responseListener) {
            @Override
            public void onReady() {
              if (stream.readyAt == null) {
                stream.readyAt = clock.instant();
              }
              super.onReady();
            }

            @Override
            public void onHeaders(Metadata h) {
              answered(false);
              super.onHeaders(h);
            }

            @Override
            public void onMessage(R message) {
              answered(
                  message instanceof StreamingPullResponse r && r.getReceivedMessagesCount() == 0);
              super.onMessage(message);
            }

            @Override
            public void onClose(Status status, Metadata trailers) {
              State s;
              synchronized (stream) {
                stream.closedWith = status;
                s = stream.state;
              }
              if (s != null) {
                closed(s, status);
              }
              super.onClose(status, trailers);
            }
          },
          headers);
    }

    @Override
    public void sendMessage(Q message) {
      if (stream.state == null && message instanceof StreamingPullRequest r) {
        State s = state(r.getSubscription());
        Status closedBefore;
        synchronized (stream) {
          stream.state = s;
          closedBefore = stream.closedWith;
          if (closedBefore == null) {
            s.opened(stream); // under the stream's monitor, so a close cannot slip in between
          }
        }
        if (stream.answeredIdle) {
          s.answersIdleStreams = true;
        }
        listener.streamOpened(s.id);
        if (closedBefore == null && stream.answered) {
          s.answered();
        }
        if (closedBefore != null) {
          // The call failed before its first request went out: a failed stream all the same.
          closed(s, closedBefore);
        }
      }
      super.sendMessage(message);
    }

    /** The server answered; {@code idle}: with an empty response, as to a keep-alive. */
    private void answered(boolean idle) {
      stream.answered = true;
      if (idle) {
        stream.answeredIdle = true;
      }
      State s = stream.state;
      if (s != null) {
        if (idle) {
          s.answersIdleStreams = true;
        }
        s.answered();
      }
    }

    private void closed(State s, Status status) {
      Status error = s.closed(stream, status);
      if (error != null) {
        listener.streamError(s.id, error.getCode().name());
      }
    }

    @Override
    public void cancel(String message, Throwable cause) {
      stream.cancelledByClient = true;
      stream.cancelCause = cause == null ? null : Status.fromThrowable(cause);
      super.cancel(message, cause);
    }
  }
}
