package dev.pubsubworker.runtime.observability;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JDK HTTP server with {@code /metrics} (Prometheus text format 0.0.4), {@code /healthz} and
 * {@code /readyz} (200 or 503 with a plain-text reason). GET and HEAD only (405 otherwise); any
 * other path is 404. Two daemon threads serve requests.
 */
final class ObservabilityHttpServer {

  static final String PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
  private static final String TEXT = "text/plain; charset=utf-8";
  private static final Logger log = LoggerFactory.getLogger(ObservabilityHttpServer.class);

  private final HttpServer server;
  private final ExecutorService executor;

  private ObservabilityHttpServer(HttpServer server, ExecutorService executor) {
    this.server = server;
    this.executor = executor;
  }

  /**
   * Binds {@code address} (port 0: one the OS picks) and starts serving.
   *
   * @throws UncheckedIOException if the address cannot be bound
   */
  static ObservabilityHttpServer start(
      InetSocketAddress address, PrometheusMeterRegistry registry, Health health) {
    HttpServer server;
    try {
      server = HttpServer.create(address, 0);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot bind the metrics and health server to "
              + address.getHostString()
              + ":"
              + address.getPort()
              + " (pubsub-worker.observability.http-host / http-port): "
              + e.getMessage(),
          e);
    }
    AtomicInteger n = new AtomicInteger();
    ExecutorService executor =
        Executors.newFixedThreadPool(
            2,
            r -> {
              Thread t = new Thread(r, "pubsub-worker-http-" + n.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    server.setExecutor(executor);
    server.createContext("/", exchange -> respond(exchange, "/", () -> null));
    server.createContext(
        "/metrics",
        exchange ->
            respond(
                exchange,
                "/metrics",
                () -> new Response(200, PROMETHEUS_CONTENT_TYPE, registry.scrape())));
    server.createContext(
        "/healthz", exchange -> respond(exchange, "/healthz", () -> verdict(health.liveness())));
    server.createContext(
        "/readyz", exchange -> respond(exchange, "/readyz", () -> verdict(health.readiness())));
    server.start();
    return new ObservabilityHttpServer(server, executor);
  }

  /** The bound address (with the OS-chosen port when asked for port 0). */
  InetSocketAddress address() {
    return server.getAddress();
  }

  /** Stops serving and closes the socket; requests in progress are cut off. */
  void stop() {
    server.stop(0);
    executor.shutdownNow();
  }

  private record Response(int status, String contentType, String body) {}

  private static Response answer(Supplier<Response> body) {
    try {
      return body.get();
    } catch (RuntimeException e) {
      log.warn("metrics or health endpoint failed", e);
      return new Response(500, TEXT, "internal error: " + e + "\n");
    }
  }

  private static Response verdict(Health.Verdict v) {
    return new Response(v.ok() ? 200 : 503, TEXT, v.text() + "\n");
  }

  /**
   * Answers one exchange. A context matches by prefix, so the exact path is checked here; {@code
   * body} returning null means 404.
   */
  private static void respond(HttpExchange exchange, String path, Supplier<Response> body) {
    try (exchange) {
      String method = exchange.getRequestMethod();
      Response r;
      if (!exchange.getRequestURI().getPath().equals(path) || path.equals("/")) {
        r = new Response(404, TEXT, "not found; try /metrics, /healthz or /readyz\n");
      } else if (!method.equals("GET") && !method.equals("HEAD")) {
        exchange.getResponseHeaders().set("Allow", "GET, HEAD");
        r = new Response(405, TEXT, "method not allowed\n");
      } else {
        r = answer(body);
      }
      byte[] bytes = r.body().getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", r.contentType());
      exchange.getResponseHeaders().set("Cache-Control", "no-store");
      if (method.equals("HEAD")) {
        exchange.sendResponseHeaders(r.status(), -1);
      } else {
        exchange.sendResponseHeaders(r.status(), bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(bytes);
        }
      }
    } catch (IOException | RuntimeException e) {
      // The client went away or a scrape failed: nothing to answer; never kill the server thread.
      log.debug("answering {} {} failed", exchange.getRequestMethod(), path, e);
    }
  }
}
