package dev.pubsubworker.runtime.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.pubsubworker.runtime.store.LockStoreCalls;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The metrics and health server against hostile clients: half-open requests (headers never
 * finished), a slow-loris trickling a byte a second, more connections than the limit, oversized
 * heads — {@code /healthz} still answers at once, and stale connections are closed.
 */
class ObservabilityHttpServerTest {

  private static final String HALF_OPEN = "GET /healthz HTTP/1.1\r\nHost: worker\r\n";

  private final List<Socket> clients = new ArrayList<>();
  private final ScheduledExecutorService trickle = Executors.newSingleThreadScheduledExecutor();
  private ObservabilityHttpServer server;

  private InetSocketAddress start(ObservabilityHttpServer.Limits limits) {
    WorkerStatus running =
        new WorkerStatus() {
          @Override
          public State state() {
            return State.RUNNING;
          }

          @Override
          public Optional<Throwable> failure() {
            return Optional.empty();
          }
        };
    Clock clock = Clock.systemUTC();
    LockStoreFreshness store = new LockStoreFreshness(clock);
    store.answered();
    Health health =
        new Health(
            running,
            store,
            Duration.ofSeconds(30),
            clock,
            new LockStoreCalls(clock),
            Duration.ofSeconds(60));
    server =
        ObservabilityHttpServer.start(
            new InetSocketAddress("127.0.0.1", 0),
            new PrometheusMeterRegistry(PrometheusConfig.DEFAULT),
            health,
            limits);
    return server.address();
  }

  @AfterEach
  void stop() throws IOException {
    trickle.shutdownNow();
    for (Socket s : clients) {
      s.close();
    }
    if (server != null) {
      server.stop();
    }
  }

  /** A connection that sent {@code bytes} and then nothing more. */
  private Socket halfOpen(InetSocketAddress address, String bytes) throws IOException {
    Socket s = new Socket(address.getAddress(), address.getPort());
    clients.add(s);
    s.getOutputStream().write(bytes.getBytes(StandardCharsets.US_ASCII));
    s.getOutputStream().flush();
    return s;
  }

  /** A connection that sends its request one byte a second, forever. */
  private Socket slowLoris(InetSocketAddress address) throws IOException {
    Socket s = halfOpen(address, "G");
    OutputStream out = s.getOutputStream();
    byte[] rest =
        "ET /healthz HTTP/1.1\r\nHost: worker\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII);
    int[] next = {0};
    trickle.scheduleAtFixedRate(
        () -> {
          try {
            out.write(next[0] < rest.length ? rest[next[0]++] : 'a');
            out.flush();
          } catch (IOException e) {
            throw new UncheckedIOException(e); // closed by the server: stops the trickle
          }
        },
        1,
        1,
        TimeUnit.SECONDS);
    return s;
  }

  /** Everything the server sends on {@code s} until it closes the connection. */
  private static String readToEnd(Socket s) throws IOException {
    s.setSoTimeout(10_000);
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    InputStream in = s.getInputStream();
    byte[] buffer = new byte[1024];
    try {
      for (int n; (n = in.read(buffer)) >= 0; ) {
        all.write(buffer, 0, n);
      }
    } catch (java.net.SocketException e) {
      // A reset after the answer counts as closed.
    }
    return all.toString(StandardCharsets.ISO_8859_1);
  }

  private static String exchange(InetSocketAddress address, String request) throws IOException {
    try (Socket s = new Socket(address.getAddress(), address.getPort())) {
      s.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
      s.getOutputStream().flush();
      return readToEnd(s);
    }
  }

  @Test
  void healthz_answers_promptly_while_half_open_and_slow_clients_hold_connections()
      throws IOException {
    // Stale connections would only be closed after a minute: the probes must not depend on it.
    InetSocketAddress address =
        start(new ObservabilityHttpServer.Limits(Duration.ofMinutes(1), 64, 8192));
    for (int i = 0; i < 3; i++) {
      halfOpen(address, HALF_OPEN);
    }
    halfOpen(address, ""); // connected, never a byte
    slowLoris(address);
    for (int probe = 0; probe < 5; probe++) {
      await()
          .atMost(Duration.ofSeconds(2))
          .untilAsserted(() -> assertThat(Http.get(address, "/healthz").status()).isEqualTo(200));
    }
    assertThat(Http.get(address, "/readyz").body()).startsWith("ready");
    assertThat(Http.get(address, "/metrics").status()).isEqualTo(200);
  }

  @Test
  void more_half_open_connections_than_the_limit_close_the_oldest_and_probes_still_answer()
      throws IOException {
    InetSocketAddress address =
        start(new ObservabilityHttpServer.Limits(Duration.ofMinutes(1), 16, 8192));
    List<Socket> first = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      Socket s = halfOpen(address, HALF_OPEN);
      if (i < 10) {
        first.add(s);
      }
    }
    await()
        .atMost(Duration.ofSeconds(2))
        .untilAsserted(() -> assertThat(Http.get(address, "/healthz").status()).isEqualTo(200));
    for (Socket s : first) {
      assertThat(readToEnd(s)).as("evicted without an answer").isEmpty();
    }
  }

  @Test
  void stale_connections_are_closed_with_408_after_the_exchange_timeout() throws IOException {
    InetSocketAddress address =
        start(new ObservabilityHttpServer.Limits(Duration.ofMillis(500), 64, 8192));
    Socket halfOpen = halfOpen(address, HALF_OPEN);
    Socket silent = halfOpen(address, "");
    Socket loris = slowLoris(address);
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              assertThat(readToEnd(halfOpen)).startsWith("HTTP/1.1 408 Request Timeout\r\n");
              assertThat(readToEnd(silent)).startsWith("HTTP/1.1 408 ");
              assertThat(readToEnd(loris)).startsWith("HTTP/1.1 408 ");
            });
    assertThat(Http.get(address, "/healthz").status()).isEqualTo(200);
  }

  @Test
  void answers_methods_paths_and_malformed_or_oversized_requests() throws IOException {
    InetSocketAddress address = start(ObservabilityHttpServer.Limits.DEFAULT);
    String ok = exchange(address, "GET /healthz?verbose HTTP/1.1\r\nHost: w\r\n\r\n");
    assertThat(ok)
        .startsWith("HTTP/1.1 200 OK\r\n")
        .contains("Content-Type: text/plain; charset=utf-8\r\n")
        .contains("Content-Length: 6\r\n")
        .contains("Connection: close\r\n")
        .endsWith("\r\n\r\nalive\n");
    assertThat(exchange(address, "HEAD /healthz HTTP/1.1\r\n\r\n"))
        .startsWith("HTTP/1.1 200 OK\r\n")
        .endsWith("\r\n\r\n");
    assertThat(exchange(address, "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n"))
        .startsWith("HTTP/1.1 405 Method Not Allowed\r\n")
        .contains("Allow: GET, HEAD\r\n");
    assertThat(exchange(address, "GET /healthz/x HTTP/1.1\n\n")).startsWith("HTTP/1.1 404 ");
    assertThat(exchange(address, "GET http://w:8080/readyz HTTP/1.1\r\n\r\n"))
        .startsWith("HTTP/1.1 200 ");
    assertThat(exchange(address, "hello\r\n\r\n")).startsWith("HTTP/1.1 400 Bad Request\r\n");
    assertThat(exchange(address, "GET /healthz HTTP/1.1\r\nX: " + "a".repeat(10_000)))
        .startsWith("HTTP/1.1 431 ");
  }

  @Test
  void the_head_limit_counts_the_request_line_and_the_headers_together_and_not_the_body()
      throws IOException {
    InetSocketAddress address = start(ObservabilityHttpServer.Limits.DEFAULT);
    // The request line and the header each fit in 8 KiB; together they do not.
    String line = "GET /healthz?" + "q".repeat(5_000) + " HTTP/1.1\r\n";
    assertThat(exchange(address, line + "X: " + "a".repeat(5_000) + "\r\n\r\n"))
        .startsWith("HTTP/1.1 431 ");
    // A head under the limit is answered, whatever the body that follows it in the same bytes.
    String head =
        "POST /metrics HTTP/1.1\r\nX: " + "a".repeat(8_000) + "\r\nContent-Length: 500\r\n\r\n";
    assertThat(exchange(address, head + "b".repeat(500))).startsWith("HTTP/1.1 405 ");
  }

  @Test
  void requests_the_http_decoder_refuses_are_400() throws IOException {
    InetSocketAddress address = start(ObservabilityHttpServer.Limits.DEFAULT);
    assertThat(exchange(address, "GET /healthz HTTP/1.1\r\nno colon\r\n\r\n"))
        .startsWith("HTTP/1.1 400 Bad Request\r\n");
    assertThat(
            exchange(
                address,
                "POST /healthz HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "0\r\n\r\n"))
        .startsWith("HTTP/1.1 400 ");
    assertThat(Http.get(address, "/healthz").status()).isEqualTo(200);
  }
}
