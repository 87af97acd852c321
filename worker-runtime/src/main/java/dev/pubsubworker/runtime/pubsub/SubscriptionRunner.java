package dev.pubsubworker.runtime.pubsub;

import com.google.api.core.ApiService;
import com.google.api.gax.batching.FlowControlSettings;
import com.google.api.gax.batching.FlowController;
import com.google.api.gax.core.FixedExecutorProvider;
import com.google.api.gax.rpc.ApiException;
import com.google.api.gax.rpc.StatusCode;
import com.google.cloud.pubsub.v1.MessageReceiver;
import com.google.cloud.pubsub.v1.MessageReceiverWithAckResponse;
import com.google.cloud.pubsub.v1.Subscriber;
import com.google.cloud.pubsub.v1.SubscriberShutdownSettings;
import com.google.common.util.concurrent.MoreExecutors;
import com.google.common.util.concurrent.ThreadFactoryBuilder;
import dev.pubsubworker.pubsub.GuardedReceiver;
import dev.pubsubworker.runtime.config.SubscriptionConfig;
import io.opentelemetry.api.OpenTelemetry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One subscription's streaming pulls, configured from its settings, feeding its {@link
 * GuardedReceiver}: {@code parallel-pull-count} {@link Subscriber}s of one stream each, each with
 * the flow control ({@link #streamFlowControl}), so the server never leases a stream more than its
 * client holds. With exactly-once delivery it uses the receiver's ack-with-response form and the
 * configured minimum ack extension; the stream ack deadline and every ack-deadline extension are at
 * most {@code max-ack-extension-per-call} ({@link AckDeadlines}), which bounds how long a crash
 * delays a message ({@link CrashRecovery}).
 *
 * <p>Stopping: {@link #stopAsync} closes the streams; the client then waits (mode
 * WAIT_FOR_PROCESSING) until every delivery it handed out is acked or nacked, which the worker's
 * stop guarantees by the end of its grace. The client's own timeout, {@code shutdownTimeout}, is
 * set beyond that so it never cuts a handler off. {@link #flushQueued} runs the deliveries waiting
 * for a handler thread on the caller, where the stopping receiver nacks them.
 */
final class SubscriptionRunner {

  private static final Logger log = LoggerFactory.getLogger(SubscriptionRunner.class);

  private final SubscriptionConfig config;
  private final SubscriptionFacts facts;
  private final List<Subscriber> subscribers;
  private final ScheduledExecutorService system;
  private final HandlerPools handlerThreads;

  SubscriptionRunner(
      SubscriptionConfig config,
      SubscriptionFacts facts,
      GuardedReceiver receiver,
      HandlerPools handlerThreads,
      PubSubConnection connection,
      Optional<OpenTelemetry> clientTracing,
      Duration shutdownTimeout,
      Consumer<Throwable> onFailure) {
    this(
        config,
        facts,
        receiver,
        receiver.asMessageReceiver(),
        handlerThreads,
        connection,
        clientTracing,
        shutdownTimeout,
        onFailure);
  }

  /**
   * A runner of {@code facts.path()} feeding {@code receiver} (with exactly-once delivery) or
   * {@code plain} (without): the subscription's own, or its redrive subscription's ({@link
   * RedriveReceiver}), with {@code config}'s client settings either way. With {@code clientTracing}
   * present, the client's own OpenTelemetry tracing is on: it starts a {@code "<subscription>
   * subscribe"} span per message (continuing the publisher's {@code googclient_traceparent}) and a
   * {@code "<subscription> process"} child on the handler thread just before it calls the receiver.
   */
  SubscriptionRunner(
      SubscriptionConfig config,
      SubscriptionFacts facts,
      MessageReceiverWithAckResponse receiver,
      MessageReceiver plain,
      HandlerPools handlerThreads,
      PubSubConnection connection,
      Optional<OpenTelemetry> clientTracing,
      Duration shutdownTimeout,
      Consumer<Throwable> onFailure) {
    this.config = config;
    this.facts = facts;
    this.handlerThreads = handlerThreads;
    int streams = config.client().parallelPullCount();
    FlowControlSettings flow = streamFlowControl(config.client());
    // One pool of system threads (lease extensions, ack sends) for all the streams, sized as the
    // client sizes its own for that many streams.
    this.system =
        new ScheduledThreadPoolExecutor(
            Math.max(6, 2 * streams),
            new ThreadFactoryBuilder()
                .setNameFormat("pubsub-" + config.id() + "-system-%d")
                .setDaemon(true)
                .build());
    AtomicBoolean failed = new AtomicBoolean();
    List<Subscriber> built = new ArrayList<>(streams);
    for (int i = 0; i < streams; i++) {
      Subscriber.Builder b;
      if (facts.exactlyOnce()) {
        b = Subscriber.newBuilder(facts.path(), receiver);
      } else {
        b = Subscriber.newBuilder(facts.path(), plain);
      }
      b.setFlowControlSettings(flow)
          .setParallelPullCount(1)
          .setExecutorProvider(handlerThreads)
          .setSystemExecutorProvider(FixedExecutorProvider.create(system))
          .setMaxAckExtensionPeriodDuration(config.client().maxAckExtension())
          .setSubscriberShutdownSettings(
              SubscriberShutdownSettings.newBuilder()
                  .setMode(SubscriberShutdownSettings.ShutdownMode.WAIT_FOR_PROCESSING)
                  .setTimeout(shutdownTimeout)
                  .build())
          .setCredentialsProvider(connection.credentialsProvider());
      clientTracing.ifPresent(otel -> b.setOpenTelemetry(otel).setEnableOpenTelemetryTracing(true));
      AckDeadlines.apply(b, config, facts.exactlyOnce());
      b.setChannelProvider(connection.subscriberChannelProvider());
      Subscriber subscriber = b.build();
      subscriber.addListener(
          new ApiService.Listener() {
            @Override
            public void failed(ApiService.State from, Throwable failure) {
              if (!failed.compareAndSet(false, true)) {
                log.debug("another stream of {} failed in state {}", config.id(), from, failure);
                return;
              }
              SubscriptionUnavailableException e = lost(config, facts, failure);
              log.error("{}; stopping the worker: {}", e.getMessage(), statusOf(failure));
              log.debug("subscriber of {} failed in state {}", config.id(), from, failure);
              onFailure.accept(e);
            }
          },
          MoreExecutors.directExecutor());
      built.add(subscriber);
    }
    this.subscribers = List.copyOf(built);
  }

  /**
   * The flow control of each of a subscription's streams: one {@code Subscriber} per stream, each
   * holding up to {@code max-outstanding-messages} and {@code max-outstanding-bytes} itself, so the
   * worker holds at most {@code parallel-pull-count} times the limits, all of it received,
   * receipted and extended.
   *
   * <p>Why not one {@code Subscriber} with {@code setParallelPullCount(n)}: google-cloud-pubsub
   * sends each of its streams the whole limit as the server-side flow control, but holds them all
   * to that one limit on the client. Pub/Sub then leases up to n times the limit to the process;
   * the surplus waits in the transport for a free slot, with a stream's thread blocked on it, no
   * receipt sent and no extension, so its leases run out and Pub/Sub redelivers it (Google's
   * advice, java-pubsub#2480: one stream per client, more clients for more streams). With one
   * client per stream the server's limit and the client's are the same. Each stream keeps the whole
   * limit rather than a share of it because the client sends acks only every 100 ms: a stream's
   * window must cover its messages for that long, and a share of it would cap the rate.
   */
  static FlowControlSettings streamFlowControl(SubscriptionConfig.ClientSettings client) {
    return FlowControlSettings.newBuilder()
        .setMaxOutstandingElementCount((long) client.maxOutstandingMessages())
        .setMaxOutstandingRequestBytes(client.maxOutstandingBytes())
        .setLimitExceededBehavior(FlowController.LimitExceededBehavior.Block)
        .build();
  }

  /**
   * What a running subscriber's failure means: the client gives up a stream only on an error it
   * will not retry (NOT_FOUND, PERMISSION_DENIED, FAILED_PRECONDITION, ...), so the subscription is
   * no longer available to this worker.
   */
  static SubscriptionUnavailableException lost(
      SubscriptionConfig config, SubscriptionFacts facts, Throwable failure) {
    StatusCode.Code code =
        failure instanceof ApiException api ? api.getStatusCode().getCode() : null;
    String what =
        code == StatusCode.Code.NOT_FOUND
            ? " no longer exists (it did at start-up)"
            : code == StatusCode.Code.PERMISSION_DENIED
                ? " may no longer be pulled by this worker (permission withdrawn)"
                : ": its streaming pull failed for good";
    return new SubscriptionUnavailableException(
        "subscription " + config.id() + ": " + facts.path() + what + "; the worker stopped",
        failure);
  }

  /**
   * The gRPC status of a client failure, one line: {@code NOT_FOUND: Subscription does not exist}.
   */
  private static String statusOf(Throwable failure) {
    Throwable root = failure;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String text = root.getMessage() == null ? root.toString() : root.getMessage();
    return text.lines().findFirst().orElse("");
  }

  /**
   * Starts pulling and waits until the subscriber runs.
   *
   * @throws SubscriptionUnavailableException if it fails to start within {@code timeout}
   */
  void start(Duration timeout) {
    subscribers.forEach(Subscriber::startAsync);
    long ends = System.nanoTime() + timeout.toNanos();
    try {
      for (Subscriber s : subscribers) {
        s.awaitRunning(Math.max(0, ends - System.nanoTime()), TimeUnit.NANOSECONDS);
      }
    } catch (TimeoutException | IllegalStateException e) {
      throw new SubscriptionUnavailableException(
          "subscription " + config.id() + ": the subscriber did not start", e);
    }
    log.info(
        "subscription {} ({}): pulling; {}, exactly-once {}, {}; after a crash, messages run"
            + " again {}",
        config.id(),
        facts.path(),
        subscribers.size() == 1 ? "1 stream" : subscribers.size() + " streams",
        facts.exactlyOnce() ? "on" : "off",
        facts.deadLetterTopic().isPresent()
            ? "dead-letter after " + facts.maxDeliveryAttempts() + " attempts"
            : "no dead-letter policy",
        CrashRecovery.of(config).withExactlyOnce(facts.exactlyOnce()).describe());
  }

  /**
   * Runs every delivery waiting for a handler thread now, on the calling thread, and every later
   * one on the thread that hands it over; with the receiver stopping, each is nacked unrun.
   *
   * @return how many waiting deliveries were flushed
   */
  int flushQueued() {
    return handlerThreads.runQueuedOnCaller();
  }

  /** Stops pulling; in-flight handlers go on until the worker's grace decides. */
  void stopAsync() {
    for (Subscriber s : subscribers) {
      if (s.isRunning() || s.state() == ApiService.State.STARTING) {
        s.stopAsync();
      }
    }
  }

  /** Waits until the subscriber has stopped; false if {@code timeout} passed first. */
  boolean awaitTerminated(Duration timeout) {
    long ends = System.nanoTime() + timeout.toNanos();
    boolean all = true;
    for (Subscriber s : subscribers) {
      try {
        s.awaitTerminated(Math.max(0, ends - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        all = false;
      } catch (IllegalStateException e) {
        // That subscriber had failed; it is not running either way.
      }
    }
    // Its tasks (extensions, ack sends) serve only these subscribers.
    system.shutdown();
    return all;
  }

  /** Whether every stream's subscriber is running. */
  boolean isRunning() {
    return subscribers.stream().allMatch(Subscriber::isRunning);
  }

  SubscriptionConfig config() {
    return config;
  }

  SubscriptionFacts facts() {
    return facts;
  }
}
