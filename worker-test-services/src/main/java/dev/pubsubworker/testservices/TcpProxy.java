package dev.pubsubworker.testservices;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A loopback TCP forwarder in front of a real service (a database, Redis, an emulator) that a test
 * can break in the two ways networks break.
 *
 * <p><b>Cut</b> ({@link #cut()} / {@link #restore()}): an outage the client notices. Every open
 * connection is reset, and connections made while cut are accepted and closed at once, until {@link
 * #restore()}; the service and its data are untouched.
 *
 * <p><b>Freeze</b> ({@link #freeze()} / {@link #resume()}): a hang the client does not notice.
 * While frozen, no byte is forwarded in either direction and nothing is closed, as when the server
 * hangs or the network silently drops packets. Clients see their connections open and their reads
 * block; new connections are accepted (and connected upstream) but their bytes are held too. {@link
 * #resume()} delivers everything held, in order, as TCP would once the network heals.
 *
 * <pre>{@code
 * try (TcpProxy proxy = TcpProxy.start("127.0.0.1", 5432)) {
 *   String url = "jdbc:postgresql://" + proxy.hostPort() + "/test";
 *   proxy.freeze();   // the database stops answering, mid-query if one is in flight
 *   proxy.resume();   // and answers again
 *   proxy.cut();      // connections reset, new ones refused
 *   proxy.restore();  // and accepted again
 * }
 * }</pre>
 *
 * Thread-safe. Uses two daemon threads per connection and one for accepting; {@link #close()}
 * closes every connection and stops them.
 */
public final class TcpProxy implements AutoCloseable {

  private final ServerSocket server;
  private final InetSocketAddress target;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private final Object gate = new Object();
  private boolean frozen;
  private volatile boolean cut;
  private volatile boolean closed;

  private TcpProxy(ServerSocket server, InetSocketAddress target) {
    this.server = server;
    this.target = target;
  }

  /**
   * Starts forwarding from a free loopback port to {@code host:port}.
   *
   * @throws UncheckedIOException if no loopback port can be bound
   */
  public static TcpProxy start(String host, int port) {
    ServerSocket server;
    try {
      server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot bind a loopback port for the TCP proxy", e);
    }
    TcpProxy proxy = new TcpProxy(server, new InetSocketAddress(host, port));
    Thread acceptor = new Thread(proxy::acceptLoop, "tcp-proxy-accept");
    acceptor.setDaemon(true);
    acceptor.start();
    return proxy;
  }

  /**
   * Starts forwarding from a free loopback port to {@code hostPort} ({@code host:port}, as {@code
   * PUBSUB_EMULATOR_HOST} and the other emulator variables give it).
   *
   * @throws IllegalArgumentException if {@code hostPort} has no {@code :port}
   * @throws UncheckedIOException if no loopback port can be bound
   */
  public static TcpProxy start(String hostPort) {
    int colon = hostPort.lastIndexOf(':');
    if (colon <= 0 || colon == hostPort.length() - 1) {
      throw new IllegalArgumentException("expected host:port, but was '" + hostPort + "'");
    }
    return start(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)));
  }

  /** Where clients connect: {@code 127.0.0.1:PORT}. */
  public String hostPort() {
    return "127.0.0.1:" + port();
  }

  /** The loopback port clients connect to. */
  public int port() {
    return server.getLocalPort();
  }

  /** Stops forwarding bytes, in both directions, on every connection; nothing is closed. */
  public void freeze() {
    synchronized (gate) {
      frozen = true;
    }
  }

  /** Forwards again, starting with what was held while frozen. */
  public void resume() {
    synchronized (gate) {
      frozen = false;
      gate.notifyAll();
    }
  }

  /**
   * Starts an outage: resets every open connection and, until {@link #restore()}, closes new ones
   * as soon as they are accepted.
   */
  public void cut() {
    cut = true;
    open.forEach(TcpProxy::closeQuietly);
    open.clear();
  }

  /** Ends the outage: new connections are forwarded again. */
  public void restore() {
    cut = false;
  }

  /** Whether the proxy is frozen. */
  public boolean isFrozen() {
    synchronized (gate) {
      return frozen;
    }
  }

  /** Closes the listening port and every connection. Idempotent. */
  @Override
  public void close() {
    closed = true;
    resume();
    closeQuietly(server);
    open.forEach(TcpProxy::closeQuietly);
    open.clear();
  }

  private void acceptLoop() {
    while (!closed) {
      Socket client;
      try {
        client = server.accept();
      } catch (IOException e) {
        return;
      }
      if (cut) {
        closeQuietly(client);
        continue;
      }
      Socket upstream = new Socket();
      try {
        upstream.connect(target, 5_000);
      } catch (IOException e) {
        closeQuietly(client);
        closeQuietly(upstream);
        continue;
      }
      open.add(client);
      open.add(upstream);
      pump(client, upstream);
      pump(upstream, client);
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
                  awaitFlowing();
                  out.write(buffer, 0, n);
                  out.flush();
                }
              } catch (IOException | InterruptedException e) {
                // The connection ended or the proxy closed.
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

  private void awaitFlowing() throws InterruptedException {
    synchronized (gate) {
      while (frozen && !closed) {
        gate.wait();
      }
    }
  }

  private static void closeQuietly(AutoCloseable c) {
    try {
      c.close();
    } catch (Exception ignored) {
      // Nothing to do: it is going away either way.
    }
  }
}
