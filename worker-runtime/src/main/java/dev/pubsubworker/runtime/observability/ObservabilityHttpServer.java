package dev.pubsubworker.runtime.observability;

import dev.pubsubworker.runtime.config.KnownSecrets;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A small HTTP/1.1 server with {@code /metrics} (Prometheus text format 0.0.4), {@code /healthz}
 * and {@code /readyz} (200 or 503 with a plain-text reason). GET and HEAD only (405 otherwise); any
 * other path is 404. One request per connection ({@code Connection: close}).
 *
 * <p>Built so that probes are answered whatever other clients do. One thread multiplexes every
 * connection with non-blocking I/O, so no client can hold a thread: a half-open request (headers
 * never finished), a client trickling a byte a second or one that never reads its answer costs a
 * socket, not the server. Each connection must send its request and take its answer within {@link
 * Limits#exchangeTimeout} (default 5 s) or it is closed (with a 408 if it was still sending); a
 * request head over {@link Limits#maxRequestBytes} (8 KiB) gets 431; beyond {@link
 * Limits#maxConnections} (64) open connections, the oldest is closed to admit the newest. The
 * answers are computed on that thread: health verdicts do no I/O and a scrape takes milliseconds.
 *
 * <p>(The JDK's {@code com.sun.net.httpserver} server reads request headers on its executor's
 * threads with blocking reads and no timeout: as many half-open connections as threads stop every
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

  private final ServerSocketChannel listener;
  private final Selector selector;
  private final Limits limits;
  private final Map<String, Supplier<Response>> routes;
  private final InetSocketAddress address;

  /** Open connections, oldest first; their deadlines are in the same order. */
  private final LinkedHashSet<Connection> open = new LinkedHashSet<>();

  private final Thread thread;
  private volatile boolean running = true;

  private ObservabilityHttpServer(
      ServerSocketChannel listener,
      Selector selector,
      Limits limits,
      Map<String, Supplier<Response>> routes)
      throws IOException {
    this.listener = listener;
    this.selector = selector;
    this.limits = limits;
    this.routes = routes;
    this.address = (InetSocketAddress) listener.getLocalAddress();
    this.thread = new Thread(this::serve, "pubsub-worker-http");
    thread.setDaemon(true);
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
   * so.
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
    Selector selector = null;
    try {
      if (address.isUnresolved()) {
        // bind would throw UnresolvedAddressException, which is no IOException.
        throw new java.net.UnknownHostException(
            "host " + address.getHostString() + " does not resolve to an address");
      }
      listener = ServerSocketChannel.open();
      listener.bind(address, 128);
      listener.configureBlocking(false);
      selector = Selector.open();
      listener.register(selector, SelectionKey.OP_ACCEPT);
      ObservabilityHttpServer server =
          new ObservabilityHttpServer(listener, selector, limits, routes);
      server.thread.start();
      return server;
    } catch (IOException e) {
      closeQuietly(listener);
      closeQuietly(selector);
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
    running = false;
    selector.wakeup();
    try {
      thread.join(Duration.ofSeconds(5).toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void serve() {
    try {
      while (running) {
        selector.select(this::ready, waitMillis());
        expire(System.nanoTime());
      }
    } catch (IOException | ClosedSelectorException e) {
      if (running) {
        log.error("the metrics and health server stopped: {}", e.toString(), e);
      }
    } finally {
      for (Connection c : open) {
        closeQuietly(c.channel);
      }
      open.clear();
      closeQuietly(listener);
      closeQuietly(selector);
    }
  }

  /** Until the oldest connection's deadline (at least 1 ms), at most a second. */
  private long waitMillis() {
    if (open.isEmpty()) {
      return 1000;
    }
    long nanos = open.iterator().next().deadline - System.nanoTime();
    return Math.max(1, Math.min(1000, Duration.ofNanos(nanos).toMillis() + 1));
  }

  private void ready(SelectionKey key) {
    try {
      if (key.isAcceptable()) {
        accept();
      } else if (key.attachment() instanceof Connection c) {
        if (key.isReadable()) {
          c.read();
        } else if (key.isWritable()) {
          c.write();
        }
      }
    } catch (IOException | RuntimeException e) {
      // A client went away or misbehaved: drop it, never the server thread.
      if (key.attachment() instanceof Connection c) {
        c.close();
      }
      log.debug("metrics and health connection dropped: {}", e.toString());
    }
  }

  private void accept() throws IOException {
    SocketChannel channel;
    while ((channel = listener.accept()) != null) {
      if (open.size() >= limits.maxConnections()) {
        open.iterator().next().close(); // the oldest, closest to its deadline anyway
      }
      channel.configureBlocking(false);
      Connection c =
          new Connection(channel, System.nanoTime() + limits.exchangeTimeout().toNanos());
      c.key = channel.register(selector, SelectionKey.OP_READ, c);
      open.add(c);
    }
  }

  /** Closes the connections past their deadline, telling a client still sending so (408). */
  private void expire(long now) {
    Iterator<Connection> it = open.iterator();
    while (it.hasNext()) {
      Connection c = it.next();
      if (c.deadline - now > 0) {
        return; // deadlines are in accept order
      }
      it.remove();
      if (c.answer == null) {
        try {
          c.channel.write(
              ByteBuffer.wrap(
                  head(new Response(408, TEXT, ""), 0, "").getBytes(StandardCharsets.US_ASCII)));
        } catch (IOException e) {
          // Best effort: it is closed either way.
        }
      }
      closeQuietly(c.channel);
    }
  }

  private record Response(int status, String contentType, String body) {}

  private static Response verdict(Health.Verdict v) {
    // The reasons quote store and subscriber errors, which can quote a configured secret.
    return new Response(v.ok() ? 200 : 503, TEXT, KnownSecrets.mask(v.text()) + "\n");
  }

  /** One client connection: reads one request head, then writes one answer and closes. */
  private final class Connection {
    final SocketChannel channel;
    final long deadline;
    final ByteBuffer request = ByteBuffer.allocate(limits.maxRequestBytes());
    SelectionKey key;
    ByteBuffer answer;

    Connection(SocketChannel channel, long deadline) {
      this.channel = channel;
      this.deadline = deadline;
    }

    void read() throws IOException {
      if (channel.read(request) < 0) {
        close(); // the client gave up before finishing its request
        return;
      }
      int end = endOfHead();
      if (end >= 0) {
        answer(respond(new String(request.array(), 0, end, StandardCharsets.ISO_8859_1)));
      } else if (!request.hasRemaining()) {
        answer(
            new Exchange(
                "GET", new Response(431, TEXT, "request header fields too large\n"), false));
      }
    }

    void write() throws IOException {
      channel.write(answer);
      if (!answer.hasRemaining()) {
        close();
      }
    }

    private void answer(Exchange exchange) throws IOException {
      Response r = exchange.response();
      byte[] body = r.body().getBytes(StandardCharsets.UTF_8);
      String head = head(r, body.length, exchange.allowHeader() ? "Allow: GET, HEAD\r\n" : "");
      byte[] headBytes = head.getBytes(StandardCharsets.US_ASCII);
      boolean withBody = !exchange.method().equals("HEAD");
      answer = ByteBuffer.allocate(headBytes.length + (withBody ? body.length : 0));
      answer.put(headBytes);
      if (withBody) {
        answer.put(body);
      }
      answer.flip();
      key.interestOps(SelectionKey.OP_WRITE);
      write(); // usually all of it at once
    }

    /** The length of the request head including its blank line, or -1 if not complete yet. */
    private int endOfHead() {
      byte[] b = request.array();
      for (int i = 0; i < request.position(); i++) {
        if (b[i] == '\n') {
          if (i + 1 < request.position() && b[i + 1] == '\n') {
            return i + 2;
          }
          if (i + 2 < request.position() && b[i + 1] == '\r' && b[i + 2] == '\n') {
            return i + 3;
          }
        }
      }
      return -1;
    }

    void close() {
      open.remove(this);
      closeQuietly(channel);
    }
  }

  private record Exchange(String method, Response response, boolean allowHeader) {}

  /** The answer to a request head: routes, 404, 405, 400; a failing route is a 500. */
  private Exchange respond(String head) {
    String requestLine = head.lines().findFirst().orElse("");
    String[] parts = requestLine.split(" ");
    if (parts.length != 3 || !parts[2].startsWith("HTTP/")) {
      return new Exchange("GET", new Response(400, TEXT, "bad request\n"), false);
    }
    String method = parts[0];
    String path = path(parts[1]);
    Supplier<Response> route = routes.get(path);
    if (route == null) {
      return new Exchange(
          method, new Response(404, TEXT, "not found; try /metrics, /healthz or /readyz\n"), false);
    }
    if (!method.equals("GET") && !method.equals("HEAD")) {
      return new Exchange(method, new Response(405, TEXT, "method not allowed\n"), true);
    }
    try {
      return new Exchange(method, route.get(), false);
    } catch (RuntimeException e) {
      log.warn("metrics or health endpoint failed", e);
      return new Exchange(
          method,
          new Response(500, TEXT, "internal error: " + KnownSecrets.mask(e.toString()) + "\n"),
          false);
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

  private static String head(Response r, int contentLength, String extraHeaders) {
    return "HTTP/1.1 "
        + r.status()
        + " "
        + reason(r.status())
        + "\r\nContent-Type: "
        + r.contentType()
        + "\r\nCache-Control: no-store\r\nContent-Length: "
        + contentLength
        + "\r\nConnection: close\r\n"
        + extraHeaders
        + "\r\n";
  }

  private static String reason(int status) {
    return switch (status) {
      case 200 -> "OK";
      case 400 -> "Bad Request";
      case 404 -> "Not Found";
      case 405 -> "Method Not Allowed";
      case 408 -> "Request Timeout";
      case 431 -> "Request Header Fields Too Large";
      case 503 -> "Service Unavailable";
      default -> "Internal Server Error";
    };
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
