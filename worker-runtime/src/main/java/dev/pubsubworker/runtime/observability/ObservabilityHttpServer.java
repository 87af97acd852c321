package dev.pubsubworker.runtime.observability;

import dev.pubsubworker.runtime.config.KnownSecrets;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFactory;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AsciiString;
import io.netty.util.concurrent.FastThreadLocalThread;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A small HTTP/1.1 server with {@code /metrics} (Prometheus text format 0.0.4), {@code /healthz}
 * and {@code /readyz} (200 or 503 with a plain-text reason). GET and HEAD only (405 otherwise); any
 * other path is 404; a request Netty's HTTP/1.1 decoder refuses is 400. One request per connection
 * ({@code Connection: close}).
 *
 * <p>Built on Netty's HTTP/1.1 codec ({@code netty-codec-http}) so that probes are answered
 * whatever other clients do. One event-loop thread ({@code pubsub-worker-http}, a daemon) serves
 * every connection with non-blocking I/O, so no client can hold a thread: a half-open request
 * (headers never finished), a client trickling a byte a second or one that never reads its answer
 * costs a socket, not the server. Each connection must send its request and take its answer within
 * {@link Limits#exchangeTimeout} (default 5 s) from its accept, or it is closed (with a 408 if it
 * was still sending); a request head (request line and headers together) over {@link
 * Limits#maxRequestBytes} (8 KiB) gets 431; beyond {@link Limits#maxConnections} (64) open
 * connections, the oldest is closed, without an answer, to admit the newest. The answers are
 * computed on the event-loop thread: health verdicts do no I/O and a scrape takes milliseconds.
 *
 * <p>{@link #start} binds the port itself, so a port in use or a host that does not resolve fails
 * the caller at once, and then brings Netty up on a thread of its own ({@code
 * pubsub-worker-http-start}): loading Netty's classes (a second of CPU on a small machine) never
 * delays the worker's own start. Connections made before the server is up wait in the listen
 * backlog and are answered as soon as it is.
 *
 * <p>Netty's decoder is stricter than the hand-written parser it replaced: a header line without a
 * colon, or {@code Content-Length} together with {@code Transfer-Encoding}, is a 400. Lines may
 * still end with a bare LF (Netty's strict line parsing, a defence against request smuggling
 * through proxies, is off: one request per connection leaves nothing to smuggle). (The JDK's {@code
 * com.sun.net.httpserver} server was refused: it reads request headers on its executor's threads
 * with blocking reads and no timeout, so as many half-open connections as threads stop every
 * answer; its {@code sun.net.httpserver.maxReqTime} closes them only after the delay, and closes
 * the queued probe's connection with them.)
 */
final class ObservabilityHttpServer {

  static final String PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
  private static final String TEXT = "text/plain; charset=utf-8";
  private static final Logger log = LoggerFactory.getLogger(ObservabilityHttpServer.class);

  /**
   * What one client may cost.
   *
   * @param exchangeTimeout how long a connection may take from accept to the end of its answer
   * @param maxConnections connections open at once; the oldest is closed to admit a new one
   * @param maxRequestBytes the largest request head (request line and headers)
   */
  record Limits(Duration exchangeTimeout, int maxConnections, int maxRequestBytes) {
    static final Limits DEFAULT = new Limits(Duration.ofSeconds(5), 64, 8 * 1024);
  }

  /** The bound socket; Netty serves it once {@link #launch} has registered it. */
  private final ServerSocketChannel listener;

  private final Limits limits;
  private final Map<String, Supplier<Response>> routes;
  private final InetSocketAddress address;
  private final Thread starter;

  private final Object lock = new Object();
  private Netty netty; // guarded by lock
  private boolean stopped; // guarded by lock

  private ObservabilityHttpServer(
      ServerSocketChannel listener, Limits limits, Map<String, Supplier<Response>> routes)
      throws IOException {
    this.listener = listener;
    this.limits = limits;
    this.routes = routes;
    this.address = (InetSocketAddress) listener.getLocalAddress();
    this.starter = new Thread(this::launch, "pubsub-worker-http-start");
    starter.setDaemon(true);
  }

  /**
   * Binds {@code address} (port 0: one the OS picks) and starts serving with {@link
   * Limits#DEFAULT}.
   *
   * @throws UncheckedIOException if the address cannot be bound
   */
  static ObservabilityHttpServer start(
      InetSocketAddress address, MeterRegistry registry, Health health) {
    return start(address, registry, health, Limits.DEFAULT);
  }

  /**
   * As {@link #start(InetSocketAddress, MeterRegistry, Health)}, with {@code limits}. {@code
   * /metrics} is the registry's scrape when it is a {@link PrometheusMeterRegistry}; with any other
   * registry the metrics go where that registry sends them, and {@code /metrics} answers 404 saying
   * so. Returns once the address is bound; the server answers as soon as Netty is up, and
   * connections made before wait in the listen backlog.
   */
  static ObservabilityHttpServer start(
      InetSocketAddress address, MeterRegistry registry, Health health, Limits limits) {
    Supplier<Response> metrics =
        registry instanceof PrometheusMeterRegistry prometheus
            ? () -> new Response(200, PROMETHEUS_CONTENT_TYPE, prometheus.scrape())
            : () ->
                new Response(
                    404,
                    TEXT,
                    "not found: the worker's metrics go to the application's "
                        + registry.getClass().getSimpleName()
                        + ", not to a Prometheus registry\n");
    Map<String, Supplier<Response>> routes =
        Map.of(
            "/metrics", metrics,
            "/healthz", () -> verdict(health.liveness()),
            "/readyz", () -> verdict(health.readiness()));
    ServerSocketChannel listener = null;
    try {
      if (address.isUnresolved()) {
        // bind would throw UnresolvedAddressException, which is no IOException.
        throw new java.net.UnknownHostException(
            "host " + address.getHostString() + " does not resolve to an address");
      }
      listener = ServerSocketChannel.open();
      listener.bind(address, 128);
      ObservabilityHttpServer server = new ObservabilityHttpServer(listener, limits, routes);
      server.starter.start();
      return server;
    } catch (IOException e) {
      closeQuietly(listener);
      throw new UncheckedIOException(
          "cannot bind the metrics and health server to "
              + address.getHostString()
              + ":"
              + address.getPort()
              + " (pubsub-worker.observability.http-host / http-port): "
              + e.getMessage(),
          e);
    }
  }

  /** The bound address (with the OS-chosen port when asked for port 0). */
  InetSocketAddress address() {
    return address;
  }

  /** Stops serving and closes the socket and every connection; answers in progress are cut off. */
  void stop() {
    synchronized (lock) {
      stopped = true;
    }
    try {
      starter.join(Duration.ofSeconds(5).toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    Netty n;
    synchronized (lock) {
      n = netty;
    }
    if (n != null) {
      n.shutdown(); // closes the listener and every connection registered with it
    }
    closeQuietly(listener); // if it never got registered
  }

  /**
   * On {@link #starter}: the event loop, and the bound socket registered with it. Every use of
   * Netty is in {@link Netty}, so that the caller's thread loads none of its classes.
   */
  private void launch() {
    try {
      Netty n = new Netty(listener, limits, routes);
      synchronized (lock) {
        if (stopped) {
          n.shutdown();
          return;
        }
        netty = n;
      }
      n.serve(this::isStopped);
    } catch (RuntimeException | LinkageError e) {
      log.error("the metrics and health server did not start: {}", e.toString(), e);
      closeQuietly(listener);
    }
  }

  private boolean isStopped() {
    synchronized (lock) {
      return stopped;
    }
  }

  private record Response(int status, String contentType, String body) {}

  private static Response verdict(Health.Verdict v) {
    // The reasons quote store and subscriber errors, which can quote a configured secret.
    return new Response(v.ok() ? 200 : 503, TEXT, KnownSecrets.mask(v.text()) + "\n");
  }

  /** The route's answer; a failing route is a 500. */
  private static Response compute(Supplier<Response> route) {
    try {
      return route.get();
    } catch (RuntimeException e) {
      log.warn("metrics or health endpoint failed", e);
      return new Response(500, TEXT, "internal error: " + KnownSecrets.mask(e.toString()) + "\n");
    }
  }

  /** The server on Netty: one event loop, one {@link Exchange} per connection. */
  private static final class Netty {
    // Written as named here (Netty's own constants are lower case).
    private static final AsciiString CONTENT_TYPE = AsciiString.cached("Content-Type");
    private static final AsciiString CACHE_CONTROL = AsciiString.cached("Cache-Control");
    private static final AsciiString CONTENT_LENGTH = AsciiString.cached("Content-Length");
    private static final AsciiString CONNECTION = AsciiString.cached("Connection");
    private static final AsciiString ALLOW = AsciiString.cached("Allow");

    private final ServerSocketChannel listener;
    private final Limits limits;
    private final Map<String, Supplier<Response>> routes;
    private final EventLoopGroup group;

    /** Open connections, oldest first; used on the event-loop thread only. */
    private final LinkedHashSet<Channel> open = new LinkedHashSet<>();

    Netty(ServerSocketChannel listener, Limits limits, Map<String, Supplier<Response>> routes) {
      this.listener = listener;
      this.limits = limits;
      this.routes = routes;
      this.group =
          new MultiThreadIoEventLoopGroup(1, Netty::eventLoopThread, NioIoHandler.newFactory());
    }

    private static Thread eventLoopThread(Runnable r) {
      Thread t = new FastThreadLocalThread(r, "pubsub-worker-http");
      t.setDaemon(true);
      return t;
    }

    /** Registers the bound socket with the event loop, which then accepts. */
    void serve(BooleanSupplier stopped) {
      new ServerBootstrap()
          .group(group)
          .channelFactory(
              (ChannelFactory<NioServerSocketChannel>) () -> new NioServerSocketChannel(listener))
          .childHandler(
              new ChannelInitializer<Channel>() {
                @Override
                protected void initChannel(Channel ch) {
                  admit(ch);
                }
              })
          .register() // already bound: registering starts accepting
          .addListener(
              (ChannelFutureListener)
                  f -> {
                    if (!f.isSuccess() && !stopped.getAsBoolean()) {
                      log.error(
                          "the metrics and health server did not start: {}",
                          f.cause().toString(),
                          f.cause());
                    }
                  });
    }

    void shutdown() {
      group.shutdownGracefully(0, 5, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }

    /** On the event loop, for each accepted connection: the limits, then the pipeline. */
    private void admit(Channel ch) {
      if (open.size() >= limits.maxConnections()) {
        Channel oldest = open.iterator().next(); // the closest to its deadline anyway
        open.remove(oldest);
        oldest.close();
      }
      open.add(ch);
      Exchange exchange = new Exchange(ch);
      ScheduledFuture<?> deadline =
          ch.eventLoop()
              .schedule(exchange::expire, limits.exchangeTimeout().toNanos(), TimeUnit.NANOSECONDS);
      ch.closeFuture()
          .addListener(
              (ChannelFutureListener)
                  f -> {
                    open.remove(ch);
                    deadline.cancel(false);
                  });
      ch.pipeline().addLast(new HeadDecoder(exchange), new HttpResponseEncoder(), exchange);
    }

    /**
     * Netty's request decoder, which limits the request line and the headers apart, with a limit on
     * them together: the bytes of the head it consumed, or, while the head is not complete, every
     * byte received. Lines may end with a bare LF, as before Netty.
     */
    private final class HeadDecoder extends HttpRequestDecoder {
      private final Exchange exchange;
      private long consumed;
      private boolean headDone;

      HeadDecoder(Exchange exchange) {
        super(
            new HttpDecoderConfig()
                .setMaxInitialLineLength(limits.maxRequestBytes())
                .setMaxHeaderSize(limits.maxRequestBytes())
                .setStrictLineParsing(false));
        this.exchange = exchange;
      }

      @Override
      protected void decode(ChannelHandlerContext ctx, ByteBuf buffer, List<Object> out)
          throws Exception {
        if (exchange.answered) {
          buffer.skipBytes(buffer.readableBytes()); // nothing more is read
          return;
        }
        int from = buffer.readerIndex();
        int decoded = out.size();
        super.decode(ctx, buffer, out);
        if (headDone) {
          return;
        }
        consumed += buffer.readerIndex() - from;
        if (out.size() > decoded) {
          headDone = true; // the request (or the decoder's refusal) is in out, the head consumed
          exchange.headBytes = consumed;
        } else if (consumed + buffer.readableBytes() > limits.maxRequestBytes()) {
          exchange.tooLarge();
          buffer.skipBytes(buffer.readableBytes());
        }
      }
    }

    /** One connection: reads one request head, then writes one answer and closes. */
    private final class Exchange extends SimpleChannelInboundHandler<HttpObject> {
      final Channel channel;
      boolean answered;
      long headBytes;

      Exchange(Channel channel) {
        this.channel = channel;
      }

      @Override
      protected void channelRead0(ChannelHandlerContext ctx, HttpObject msg) {
        if (answered || !(msg instanceof HttpRequest request)) {
          return; // a body, or anything after the answer
        }
        if (request.decoderResult().isFailure()) {
          if (request.decoderResult().cause() instanceof TooLongFrameException) {
            tooLarge();
          } else {
            answer("GET", new Response(400, TEXT, "bad request\n"), false);
          }
          return;
        }
        if (headBytes > limits.maxRequestBytes()) {
          tooLarge();
          return;
        }
        String method = request.method().name();
        Supplier<Response> route = routes.get(path(request.uri()));
        if (route == null) {
          answer(
              method,
              new Response(404, TEXT, "not found; try /metrics, /healthz or /readyz\n"),
              false);
        } else if (!method.equals("GET") && !method.equals("HEAD")) {
          answer(method, new Response(405, TEXT, "method not allowed\n"), true);
        } else {
          answer(method, compute(route), false);
        }
      }

      void tooLarge() {
        answer("GET", new Response(431, TEXT, "request header fields too large\n"), false);
      }

      /** Writes the answer, then closes; reads nothing more. */
      private void answer(String method, Response r, boolean allowHeader) {
        answered = true;
        channel.config().setAutoRead(false);
        channel
            .writeAndFlush(response(r, !method.equals("HEAD"), allowHeader))
            .addListener(ChannelFutureListener.CLOSE);
      }

      /** At the deadline: a 408 if the client is still sending, and closed either way. */
      void expire() {
        if (!answered) {
          answered = true;
          // Best effort: whatever the socket takes now; it is closed either way.
          channel.writeAndFlush(response(new Response(408, TEXT, ""), true, false));
        }
        channel.close();
      }

      @Override
      public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // A client went away or misbehaved: drop it, never the server.
        log.debug("metrics and health connection dropped: {}", cause.toString());
        ctx.close();
      }
    }

    private static FullHttpResponse response(Response r, boolean withBody, boolean allowHeader) {
      byte[] body = r.body().getBytes(StandardCharsets.UTF_8);
      FullHttpResponse response =
          new DefaultFullHttpResponse(
              HttpVersion.HTTP_1_1,
              HttpResponseStatus.valueOf(r.status()),
              withBody ? Unpooled.wrappedBuffer(body) : Unpooled.EMPTY_BUFFER);
      HttpHeaders headers = response.headers();
      headers
          .set(CONTENT_TYPE, r.contentType())
          .set(CACHE_CONTROL, "no-store")
          .set(CONTENT_LENGTH, body.length)
          .set(CONNECTION, "close");
      if (allowHeader) {
        headers.set(ALLOW, "GET, HEAD");
      }
      return response;
    }
  }

  /** The path of a request target: origin form ({@code /healthz?x}) or absolute form. */
  private static String path(String target) {
    String t = target;
    int scheme = t.indexOf("://");
    if (scheme > 0) {
      int slash = t.indexOf('/', scheme + 3);
      t = slash < 0 ? "/" : t.substring(slash);
    }
    int query = t.indexOf('?');
    return query < 0 ? t : t.substring(0, query);
  }

  private static void closeQuietly(java.io.Closeable c) {
    if (c == null) {
      return;
    }
    try {
      c.close();
    } catch (IOException e) {
      // Closing: nothing left to do with it.
    }
  }
}
