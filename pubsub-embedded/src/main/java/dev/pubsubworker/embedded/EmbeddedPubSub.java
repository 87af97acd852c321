package dev.pubsubworker.embedded;

import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An in-process Google Cloud Pub/Sub server: the {@code google.pubsub.v1} Publisher, Subscriber and
 * SchemaService services over plaintext gRPC, which the unmodified google-cloud-pubsub {@code
 * Publisher}, {@code Subscriber} and admin clients use exactly as they use {@code
 * PUBSUB_EMULATOR_HOST}.
 *
 * <p>Deadlines and backoffs are judged against the {@link Clock} given to the builder (the system
 * clock by default). A background ticker checks them every {@link Builder#setTickInterval tick
 * interval}; with a manual clock, advance it and call {@link #tick()} to apply the new time at
 * once. State lives in memory and is lost at {@link #close()}. Any project id is accepted.
 *
 * <p>A subscription's messages are spread over its open StreamingPull streams: each goes to the
 * stream holding the fewest outstanding messages that has room under its flow-control window and
 * its allowance, so several subscribers share the work. A stream's allowance is 10 messages when it
 * opens and grows by 200 per second of the clock and by one per acked message, and it is never less
 * than what the fullest other stream of the subscription holds. So with a manual clock, a lone
 * stream that acks nothing holds at most 10 messages until the clock moves. Messages outstanding on
 * a stream stay with it until they are acked, nacked or their deadline passes. The module's README
 * states the whole policy.
 *
 * <pre>{@code
 * try (EmbeddedPubSub pubsub = EmbeddedPubSub.start()) {
 *   String host = pubsub.hostPort(); // "127.0.0.1:PORT" for PUBSUB_EMULATOR_HOST
 * }
 * }</pre>
 *
 * <p>Thread-safe.
 */
public final class EmbeddedPubSub implements AutoCloseable {

  /** Largest request the server accepts: twice Pub/Sub's 10 MB publish limit. */
  static final int MAX_INBOUND_MESSAGE_BYTES = 20 * 1024 * 1024 + 1024 * 1024;

  private final Broker broker;
  private final Server server;
  private final String host;
  private final ScheduledExecutorService ticker;
  private final ExecutorService callExecutor;
  private final AtomicInteger closed = new AtomicInteger();

  private EmbeddedPubSub(Builder builder) throws IOException {
    this.broker = new Broker(builder.clock);
    this.host = builder.host;
    this.callExecutor = Executors.newCachedThreadPool(daemonThreads("embedded-pubsub-call"));
    this.server =
        NettyServerBuilder.forAddress(new InetSocketAddress(builder.host, builder.port))
            .executor(callExecutor)
            .protocolNegotiator(new HttpProbeNegotiator())
            .maxInboundMessageSize(MAX_INBOUND_MESSAGE_BYTES)
            .permitKeepAliveTime(1, TimeUnit.SECONDS)
            .permitKeepAliveWithoutCalls(true)
            .addService(
                ServerInterceptors.intercept(
                    new PublisherService(broker), new LatencyInterceptor(broker.faults())))
            .addService(
                ServerInterceptors.intercept(
                    new SubscriberService(broker), new LatencyInterceptor(broker.faults())))
            .addService(
                ServerInterceptors.intercept(
                    new SchemaService(broker), new LatencyInterceptor(broker.faults())))
            .build()
            .start();
    this.ticker = Executors.newSingleThreadScheduledExecutor(daemonThreads("embedded-pubsub-tick"));
    long intervalNanos = builder.tickInterval.toNanos();
    ticker.scheduleWithFixedDelay(
        this::tickQuietly, intervalNanos, intervalNanos, TimeUnit.NANOSECONDS);
  }

  /**
   * Starts a server on 127.0.0.1, on a free port, with the system clock.
   *
   * @throws UncheckedIOException if the server cannot bind
   */
  public static EmbeddedPubSub start() {
    return newBuilder().start();
  }

  /** A builder: 127.0.0.1, a free port, the system clock, a 50 ms tick. */
  public static Builder newBuilder() {
    return new Builder();
  }

  /** Where the server listens, {@code "host:port"}: the value for {@code PUBSUB_EMULATOR_HOST}. */
  public String hostPort() {
    return host + ":" + port();
  }

  /** The port the server listens on. */
  public int port() {
    return server.getPort();
  }

  /** The fault-injection switches of this server. */
  public Faults faults() {
    return broker.faults();
  }

  /**
   * How many StreamingPull streams are open on {@code subscription} now, as this server sees them:
   * by its full name ({@code "projects/p/subscriptions/orders"}), or by its id ({@code "orders"}),
   * which counts that id in every project. A stream counts from its first request until the client
   * ends or cancels it (a killed client's stream ends when its connection does) or the server ends
   * it. For tests that must wait until every subscriber has connected, or until a departed one is
   * gone, before they publish or let time pass.
   *
   * @throws IllegalArgumentException if {@code subscription} is empty
   */
  public int openStreams(String subscription) {
    if (subscription.isEmpty()) {
      throw new IllegalArgumentException("subscription must be an id or a full name");
    }
    return broker.openStreams(subscription);
  }

  /** The clock deadlines are judged against. */
  public Clock clock() {
    return broker.clock();
  }

  /**
   * Applies the clock's current time now: expires due leases (redelivering or dead-lettering their
   * messages), ends due retry backoffs, applies due delayed acks and delivers to open streams. The
   * ticker calls it every tick interval; tests with a manual clock call it after advancing.
   */
  public void tick() {
    broker.tick();
  }

  /** Stops the server, ending open streams with {@code UNAVAILABLE}; idempotent. */
  @Override
  public void close() {
    if (closed.getAndIncrement() > 0) {
      return;
    }
    ticker.shutdownNow();
    broker.close();
    server.shutdownNow();
    try {
      server.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    callExecutor.shutdownNow();
  }

  /** Blocks until the server has stopped. */
  void awaitTermination() throws InterruptedException {
    server.awaitTermination();
  }

  @Override
  public String toString() {
    return "EmbeddedPubSub[" + hostPort() + "]";
  }

  private void tickQuietly() {
    try {
      broker.tick();
    } catch (RuntimeException e) {
      // A failed tick must not stop the ticker: the next tick retries with the state as it is.
      Thread.currentThread()
          .getUncaughtExceptionHandler()
          .uncaughtException(Thread.currentThread(), e);
    }
  }

  private static ThreadFactory daemonThreads(String prefix) {
    AtomicInteger count = new AtomicInteger();
    return runnable -> {
      Thread thread = new Thread(runnable, prefix + "-" + count.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
  }

  /** Settings of an {@link EmbeddedPubSub}; each setter states its default. */
  public static final class Builder {
    private String host = "127.0.0.1";
    private int port;
    private Clock clock = Clock.systemUTC();
    private Duration tickInterval = Duration.ofMillis(50);

    private Builder() {}

    /** The address to bind; default {@code 127.0.0.1}. */
    public Builder setHost(String host) {
      Objects.requireNonNull(host, "host");
      if (host.isBlank()) {
        throw new IllegalArgumentException("host must not be blank");
      }
      this.host = host;
      return this;
    }

    /**
     * The port to bind; default 0, a free port.
     *
     * @throws IllegalArgumentException if not within 0..65535
     */
    public Builder setPort(int port) {
      if (port < 0 || port > 65535) {
        throw new IllegalArgumentException("port must be within 0..65535, but was " + port);
      }
      this.port = port;
      return this;
    }

    /** The clock that publish times, deadlines and backoffs use; default the system UTC clock. */
    public Builder setClock(Clock clock) {
      this.clock = Objects.requireNonNull(clock, "clock");
      return this;
    }

    /**
     * How often the ticker applies the clock's time ({@link EmbeddedPubSub#tick()}); default 50 ms.
     *
     * @throws IllegalArgumentException if not positive
     */
    public Builder setTickInterval(Duration tickInterval) {
      if (tickInterval.isNegative() || tickInterval.isZero()) {
        throw new IllegalArgumentException("tick interval must be > 0, but was " + tickInterval);
      }
      this.tickInterval = tickInterval;
      return this;
    }

    /**
     * Starts the server.
     *
     * @throws UncheckedIOException if it cannot bind the host and port
     */
    public EmbeddedPubSub start() {
      try {
        return new EmbeddedPubSub(this);
      } catch (IOException e) {
        throw new UncheckedIOException(
            "embedded Pub/Sub could not listen on " + host + ":" + port + ": " + e.getMessage(), e);
      }
    }
  }
}
