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
import org.junit.jupiter.api.Test;

/** The freezable proxy, in front of a loopback echo server. */
class FreezableTcpProxyTest {

  @Test
  void forwards_holds_everything_while_frozen_and_delivers_it_in_order_after_resume()
      throws IOException {
    try (ServerSocket echo = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        FreezableTcpProxy proxy = FreezableTcpProxy.start("127.0.0.1", echo.getLocalPort())) {
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

  private static void echoOnce(ServerSocket server) {
    try (Socket s = server.accept()) {
      s.getInputStream().transferTo(s.getOutputStream());
    } catch (IOException e) {
      // The test is over.
    }
  }
}
