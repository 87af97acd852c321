package dev.pubsubworker.testservices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The proxy, in front of a loopback echo server: forwarding, freezing and cutting. */
class TcpProxyTest {

  @Test
  void forwards_holds_everything_while_frozen_and_delivers_it_in_order_after_resume()
      throws IOException {
    try (ServerSocket echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        TcpProxy proxy = TcpProxy.start("127.0.0.1", echo.getLocalPort())) {
      Thread server = new Thread(() -> echoOnce(echo), "echo");
      server.setDaemon(true);
      server.start();
      try (Socket client = new Socket("127.0.0.1", proxy.port())) {
        client.setSoTimeout(10_000);
        OutputStream out = client.getOutputStream();
        InputStream in = client.getInputStream();
        out.write("a".getBytes(StandardCharsets.UTF_8));
        assertThat(in.read()).isEqualTo('a');

        proxy.freeze();
        assertThat(proxy.isFrozen()).isTrue();
        out.write("bc".getBytes(StandardCharsets.UTF_8));
        client.setSoTimeout(300);
        // Nothing comes back while frozen, and the connection stays open.
        assertThatThrownBy(in::read).isInstanceOf(SocketTimeoutException.class);
        assertThat(client.isClosed()).isFalse();

        proxy.resume();
        client.setSoTimeout(10_000);
        assertThat(new String(in.readNBytes(2), StandardCharsets.UTF_8)).isEqualTo("bc");
      }
      assertThat(proxy.hostPort()).isEqualTo("127.0.0.1:" + proxy.port());
    }
  }

  @Test
  void a_cut_resets_open_connections_and_refuses_new_ones_until_restored() throws IOException {
    try (ServerSocket echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        TcpProxy proxy = TcpProxy.start("127.0.0.1", echo.getLocalPort())) {
      Thread server = new Thread(() -> echoForever(echo), "echo");
      server.setDaemon(true);
      server.start();
      try (Socket before = new Socket("127.0.0.1", proxy.port())) {
        before.setSoTimeout(10_000);
        before.getOutputStream().write('a');
        assertThat(before.getInputStream().read()).isEqualTo('a');

        proxy.cut();
        assertThat(readAfterWrite(before)).as("the open connection was reset").isEqualTo(-1);
        try (Socket during = new Socket("127.0.0.1", proxy.port())) {
          during.setSoTimeout(10_000);
          assertThat(readAfterWrite(during)).as("a new connection is closed at once").isEqualTo(-1);
        }
      }
      proxy.restore();
      try (Socket after = new Socket("127.0.0.1", proxy.port())) {
        after.setSoTimeout(10_000);
        after.getOutputStream().write('b');
        assertThat(after.getInputStream().read()).isEqualTo('b');
      }
    }
  }

  /** Writes a byte and reads one: -1 when the proxy closed the connection (a reset counts too). */
  private static int readAfterWrite(Socket socket) {
    try {
      socket.getOutputStream().write('x');
      return socket.getInputStream().read();
    } catch (IOException e) {
      return -1;
    }
  }

  @Test
  void with_latency_each_direction_waits_its_delay_keeps_order_and_still_freezes()
      throws IOException {
    Duration oneWay = Duration.ofMillis(40);
    try (ServerSocket echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        TcpProxy proxy = TcpProxy.start("127.0.0.1", echo.getLocalPort(), oneWay)) {
      assertThat(proxy.delay()).isEqualTo(oneWay);
      Thread server = new Thread(() -> echoForever(echo), "echo");
      server.setDaemon(true);
      server.start();
      try (Socket client = new Socket("127.0.0.1", proxy.port())) {
        client.setSoTimeout(10_000);
        OutputStream out = client.getOutputStream();
        InputStream in = client.getInputStream();
        long start = System.nanoTime();
        out.write('a');
        out.flush();
        assertThat(in.read()).isEqualTo('a');
        // There and back: at least the delay twice (the relay never delivers early).
        assertThat(Duration.ofNanos(System.nanoTime() - start))
            .isGreaterThanOrEqualTo(oneWay.multipliedBy(2));

        // Pipelined writes come back whole and in order.
        for (char c : "bcdef".toCharArray()) {
          out.write(c);
          out.flush();
        }
        assertThat(new String(in.readNBytes(5), StandardCharsets.UTF_8)).isEqualTo("bcdef");

        proxy.freeze();
        out.write('g');
        out.flush();
        client.setSoTimeout(300);
        assertThatThrownBy(in::read).isInstanceOf(SocketTimeoutException.class);
        proxy.resume();
        client.setSoTimeout(10_000);
        assertThat(in.read()).isEqualTo('g');
      }
    }
  }

  @Test
  void measure_times_round_trips_and_a_zero_delay_calibrates_to_zero() {
    TcpProxy.RoundTrip direct = TcpProxy.measure(null, 20);
    assertThat(direct.minMillis()).isPositive().isLessThanOrEqualTo(direct.medianMillis());
    assertThat(direct.medianMillis()).isLessThanOrEqualTo(direct.p90Millis());
    assertThat(direct.toString()).matches("[0-9.]+ / [0-9.]+ / [0-9.]+ ms");
    try (TcpProxy proxy = TcpProxy.calibrated("127.0.0.1", 9, Duration.ZERO)) {
      assertThat(proxy.delay()).isZero();
    }
    assertThatThrownBy(() -> TcpProxy.start("127.0.0.1", 9, Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("oneWay must not be negative");
  }

  private static void echoForever(ServerSocket server) {
    while (!server.isClosed()) {
      try {
        Socket s = server.accept();
        Thread t =
            new Thread(
                () -> {
                  try (s) {
                    s.getInputStream().transferTo(s.getOutputStream());
                  } catch (IOException e) {
                    // The connection ended.
                  }
                },
                "echo-connection");
        t.setDaemon(true);
        t.start();
      } catch (IOException e) {
        return;
      }
    }
  }

  private static void echoOnce(ServerSocket server) {
    try (Socket s = server.accept()) {
      s.getInputStream().transferTo(s.getOutputStream());
    } catch (IOException e) {
      // The test is over.
    }
  }
}
