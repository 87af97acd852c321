package dev.pubsubworker.testservices;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.locks.LockSupport;

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
 * <p><b>Latency</b> ({@link #start(String, int, Duration)}): each direction of every connection
 * delivers each chunk {@code oneWay} after it was read, keeping the bytes' order, so a local server
 * answers as one across a network would: a round trip takes at least twice {@code oneWay}, while
 * requests sent in a row (pipelined) still overlap in flight. Freeze and cut apply as without it.
 * The relay's own hand-offs (a writer thread woken from a queue and from a timed park) add to the
 * delay, and where waking a parked thread is expensive (a VM without a cpuidle driver) they add
 * more than the delay asked for: {@link #calibrated} waits less by what it measured, and {@link
 * #measure} says what a relay really delivers, so that a benchmark can print the latency its
 * figures were taken at rather than the one it asked for.
 *
 * <p>Thread-safe. Uses two daemon threads per connection (four with latency) and one for accepting;
 * {@link #close()} closes every connection and stops them.
 */
public final class TcpProxy implements AutoCloseable {

  /** Round trips through a relay: min, median and 90th percentile, in milliseconds. */
  public record RoundTrip(double minMillis, double medianMillis, double p90Millis) {
    @Override
    public String toString() {
      return String.format(
          Locale.ROOT, "%.3f / %.3f / %.3f ms", minMillis, medianMillis, p90Millis);
    }
  }

  private record Chunk(long dueNanos, byte[] bytes) {}

  private static final Chunk END = new Chunk(0, new byte[0]);

  private final ServerSocket server;
  private final InetSocketAddress target;
  private final long delayNanos;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private final Object gate = new Object();
  private boolean frozen;
  private volatile boolean cut;
  private volatile boolean closed;

  private TcpProxy(ServerSocket server, InetSocketAddress target, Duration oneWay) {
    this.server = server;
    this.target = target;
    this.delayNanos = oneWay.toNanos();
  }

  /**
   * Starts forwarding from a free loopback port to {@code host:port}.
   *
   * @throws UncheckedIOException if no loopback port can be bound
   */
  public static TcpProxy start(String host, int port) {
    return start(host, port, Duration.ZERO);
  }

  /**
   * Starts forwarding from a free loopback port to {@code host:port}, each chunk {@code oneWay}
   * after it was read, in each direction.
   *
   * @throws IllegalArgumentException if {@code oneWay} is negative
   * @throws UncheckedIOException if no loopback port can be bound
   */
  public static TcpProxy start(String host, int port, Duration oneWay) {
    if (oneWay.isNegative()) {
      throw new IllegalArgumentException("oneWay must not be negative, but was " + oneWay);
    }
    ServerSocket server;
    try {
      server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot bind a loopback port for the TCP proxy", e);
    }
    TcpProxy proxy = new TcpProxy(server, new InetSocketAddress(host, port), oneWay);
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

  /**
   * A relay to {@code host:port} whose round trips take about {@code 2 × oneWay}: it times relays
   * over loopback and corrects the wait by what they overshot (their hand-offs and the timer's
   * slack), three times, never waiting less than zero. Where the overhead alone exceeds the delay
   * asked for, the relay waits zero and its round trips stay longer than asked: {@link #measure}
   * says by how much.
   *
   * @throws UncheckedIOException if the calibration's loopback connections fail
   */
  public static TcpProxy calibrated(String host, int port, Duration oneWay) {
    long target = 2 * oneWay.toNanos();
    long wait = oneWay.toNanos();
    for (int i = 0; i < 3 && wait > 0; i++) {
      long measured = (long) (measure(Duration.ofNanos(wait), 200).medianMillis() * 1e6);
      wait = Math.max(0, wait - (measured - target) / 2);
    }
    return start(host, port, Duration.ofNanos(wait));
  }

  /**
   * Times {@code pings} one-byte round trips (after 20 unrecorded ones) to a loopback echo server,
   * through a relay that waits {@code oneWay} in each direction ({@code null}: straight to the echo
   * server, no relay).
   *
   * @throws UncheckedIOException if a loopback connection fails
   */
  public static RoundTrip measure(Duration oneWay, int pings) {
    try (ServerSocket echo = new ServerSocket(0, 8, InetAddress.getLoopbackAddress())) {
      Thread server =
          new Thread(
              () -> {
                try (Socket s = echo.accept();
                    InputStream in = s.getInputStream();
                    OutputStream out = s.getOutputStream()) {
                  s.setTcpNoDelay(true);
                  int b;
                  while ((b = in.read()) >= 0) {
                    out.write(b);
                    out.flush();
                  }
                } catch (IOException e) {
                  // The pinger closed.
                }
              },
              "tcp-proxy-echo");
      server.setDaemon(true);
      server.start();
      TcpProxy relay = oneWay == null ? null : start("127.0.0.1", echo.getLocalPort(), oneWay);
      try (Socket s = new Socket("127.0.0.1", relay == null ? echo.getLocalPort() : relay.port())) {
        s.setTcpNoDelay(true);
        s.setSoTimeout(10_000);
        OutputStream out = s.getOutputStream();
        InputStream in = s.getInputStream();
        long[] nanos = new long[pings];
        for (int i = -20; i < pings; i++) {
          long start = System.nanoTime();
          out.write(1);
          out.flush();
          if (in.read() < 0) {
            throw new IOException("the echo server closed the connection");
          }
          if (i >= 0) {
            nanos[i] = System.nanoTime() - start;
          }
        }
        Arrays.sort(nanos);
        return new RoundTrip(
            nanos[0] / 1e6,
            nanos[pings / 2] / 1e6,
            nanos[Math.min(pings - 1, pings * 9 / 10)] / 1e6);
      } finally {
        if (relay != null) {
          relay.close();
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("timing round trips over loopback failed", e);
    }
  }

  /** How long this proxy holds each chunk in each direction, beyond its own overhead. */
  public Duration delay() {
    return Duration.ofNanos(delayNanos);
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
      try {
        client.setTcpNoDelay(true);
        upstream.setTcpNoDelay(true);
      } catch (IOException e) {
        // Forward anyway, with Nagle's delay.
      }
      if (delayNanos == 0) {
        pump(client, upstream);
        pump(upstream, client);
      } else {
        delayedPump(client, upstream);
        delayedPump(upstream, client);
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

  /**
   * Forwards {@code from} to {@code to}, each chunk {@link #delayNanos} after it was read: a reader
   * queues it with its due time, a writer waits for that time (and for the proxy to flow) and
   * writes it.
   */
  private void delayedPump(Socket from, Socket to) {
    LinkedBlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
    Thread reader =
        new Thread(
            () -> {
              byte[] buffer = new byte[64 * 1024];
              try (InputStream in = from.getInputStream()) {
                int n;
                while ((n = in.read(buffer)) > 0) {
                  queue.add(new Chunk(System.nanoTime() + delayNanos, Arrays.copyOf(buffer, n)));
                }
              } catch (IOException e) {
                // The connection ended; the writer ends it on the other side.
              } finally {
                queue.add(END);
              }
            },
            "tcp-proxy-read");
    Thread writer =
        new Thread(
            () -> {
              try (OutputStream out = to.getOutputStream()) {
                while (true) {
                  Chunk c = queue.take();
                  if (c == END) {
                    break;
                  }
                  long wait;
                  while ((wait = c.dueNanos() - System.nanoTime()) > 0) {
                    LockSupport.parkNanos(wait);
                  }
                  awaitFlowing();
                  out.write(c.bytes());
                  out.flush();
                }
              } catch (IOException | InterruptedException e) {
                // The connection ended or the proxy closed.
              } finally {
                closeQuietly(to);
                closeQuietly(from);
                open.remove(from);
                open.remove(to);
              }
            },
            "tcp-proxy-write");
    reader.setDaemon(true);
    writer.setDaemon(true);
    reader.start();
    writer.start();
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
