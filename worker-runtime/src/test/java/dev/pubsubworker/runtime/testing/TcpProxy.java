package dev.pubsubworker.runtime.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A loopback TCP forwarder in front of a server (Google's Pub/Sub emulator), so a test can cut the
 * connection (an outage: open connections are reset, new ones accepted and closed at once) and
 * restore it while the server and its data stay untouched.
 */
public final class TcpProxy implements AutoCloseable {
  private final ServerSocket server;
  private final String targetHost;
  private final int targetPort;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private volatile boolean forwarding = true;
  private volatile boolean closed;

  /** Forwards to {@code targetHostPort} ({@code host:port}) from an OS-chosen loopback port. */
  public TcpProxy(String targetHostPort) throws IOException {
    int colon = targetHostPort.lastIndexOf(':');
    this.targetHost = targetHostPort.substring(0, colon);
    this.targetPort = Integer.parseInt(targetHostPort.substring(colon + 1));
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::acceptLoop, "tcp-proxy-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** Where clients connect, {@code 127.0.0.1:port}. */
  public String hostPort() {
    return "127.0.0.1:" + server.getLocalPort();
  }

  /** Starts the outage: resets every open connection and refuses to forward new ones. */
  public void cut() {
    forwarding = false;
    open.forEach(TcpProxy::closeQuietly);
    open.clear();
  }

  /** Ends the outage. */
  public void restore() {
    forwarding = true;
  }

  @Override
  public void close() {
    closed = true;
    cut();
    closeQuietly(server);
  }

  private void acceptLoop() {
    while (!closed) {
      Socket client;
      try {
        client = server.accept();
      } catch (IOException e) {
        return;
      }
      if (!forwarding) {
        closeQuietly(client);
        continue;
      }
      try {
        Socket upstream = new Socket();
        upstream.connect(new InetSocketAddress(targetHost, targetPort), 5_000);
        open.add(client);
        open.add(upstream);
        pump(client, upstream);
        pump(upstream, client);
      } catch (IOException e) {
        closeQuietly(client);
      }
    }
  }

  private void pump(Socket from, Socket to) {
    Thread t =
        new Thread(
            () -> {
              byte[] buffer = new byte[16 * 1024];
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                  out.write(buffer, 0, n);
                  out.flush();
                }
              } catch (IOException e) {
                // The connection ended or was cut.
              } finally {
                closeQuietly(from);
                closeQuietly(to);
                open.remove(from);
                open.remove(to);
              }
            },
            "tcp-proxy-pump");
    t.setDaemon(true);
    t.start();
  }

  private static void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception ignored) {
      // Nothing to do: it is going away either way.
    }
  }
}
