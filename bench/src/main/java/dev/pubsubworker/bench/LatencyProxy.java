package dev.pubsubworker.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * A TCP relay on a loopback port that forwards each direction of every connection to {@code target}
 * after {@code oneWay}, keeping the bytes' order: a local server then answers as one across a
 * network would, a round trip taking at least twice {@code oneWay}, while requests sent in a row
 * (pipelined) still overlap in flight. For benchmarks only: one thread per direction of each
 * connection, daemon threads, no limits.
 *
 * <p>The relay's own hand-offs (a reader thread, a writer thread woken from a queue and from a
 * timed park, whose slack is tens of microseconds) add to the delay, and where waking a parked
 * thread is expensive (a VM without a cpuidle driver) they add more than the delay asked for.
 * {@link #calibrated} measures that and waits less by what it measured, and {@link #measure} says
 * what a relay really delivers, so that a benchmark prints the latency its figures were taken at
 * rather than the one it asked for.
 */
final class LatencyProxy implements AutoCloseable {

  private record Chunk(long dueNanos, byte[] bytes) {}

  private static final Chunk END = new Chunk(0, new byte[0]);

  /** Round trips through a relay: min, median and 90th percentile, in milliseconds. */
  record RoundTrip(double minMillis, double medianMillis, double p90Millis) {
    @Override
    public String toString() {
      return String.format(
          Locale.ROOT, "%.3f / %.3f / %.3f ms", minMillis, medianMillis, p90Millis);
    }
  }

  private final ServerSocket server;
  private final InetSocketAddress target;
  private final long delayNanos;

  LatencyProxy(String host, int port, Duration oneWay) throws IOException {
    this.target = new InetSocketAddress(host, port);
    this.delayNanos = oneWay.toNanos();
    this.server = new ServerSocket(0, 128, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::accept, "latency-proxy-accept");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /**
   * A relay to {@code host:port} whose round trips take about {@code 2 × oneWay}: it times relays
   * over loopback and corrects the wait by what they overshot (their hand-offs and the timer's
   * slack), three times, never waiting less than zero. Where the overhead alone exceeds the delay
   * asked for, the relay waits zero and its round trips stay longer than asked: {@link #measure}
   * says by how much.
   */
  static LatencyProxy calibrated(String host, int port, Duration oneWay) throws IOException {
    long target = 2 * oneWay.toNanos();
    long wait = oneWay.toNanos();
    for (int i = 0; i < 3 && wait > 0; i++) {
      long measured = (long) (measure(Duration.ofNanos(wait), 200).medianMillis() * 1e6);
      wait = Math.max(0, wait - (measured - target) / 2);
    }
    return new LatencyProxy(host, port, Duration.ofNanos(wait));
  }

  /**
   * Times {@code pings} one-byte round trips to a loopback echo server, through a relay that waits
   * {@code oneWay} in each direction ({@code null}: straight to the echo server, no relay).
   */
  static RoundTrip measure(Duration oneWay, int pings) throws IOException {
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
              "latency-proxy-echo");
      server.setDaemon(true);
      server.start();
      LatencyProxy relay =
          oneWay == null ? null : new LatencyProxy("127.0.0.1", echo.getLocalPort(), oneWay);
      try (Socket s = new Socket("127.0.0.1", relay == null ? echo.getLocalPort() : relay.port())) {
        s.setTcpNoDelay(true);
        s.setSoTimeout(10_000);
        OutputStream out = s.getOutputStream();
        InputStream in = s.getInputStream();
        long[] nanos = new long[pings];
        for (int i = -20; i < pings; i++) { // 20 unrecorded pings to warm up
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
    }
  }

  /** The loopback port clients connect to. */
  int port() {
    return server.getLocalPort();
  }

  /** How long this relay waits in each direction, beyond its own overhead. */
  Duration delay() {
    return Duration.ofNanos(delayNanos);
  }

  private void accept() {
    while (!server.isClosed()) {
      try {
        Socket client = server.accept();
        Socket upstream = new Socket();
        upstream.connect(target, 5_000);
        client.setTcpNoDelay(true);
        upstream.setTcpNoDelay(true);
        relay(client, upstream);
        relay(upstream, client);
      } catch (IOException e) {
        if (!server.isClosed()) {
          System.err.println("latency proxy: " + e);
        }
      }
    }
  }

  /** Forwards {@code from} to {@code to}, each chunk {@link #delayNanos} after it was read. */
  private void relay(Socket from, Socket to) {
    LinkedBlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
    Thread reader =
        new Thread(
            () -> {
              byte[] buf = new byte[64 * 1024];
              try (InputStream in = from.getInputStream()) {
                int n;
                while ((n = in.read(buf)) > 0) {
                  queue.add(new Chunk(System.nanoTime() + delayNanos, Arrays.copyOf(buf, n)));
                }
              } catch (IOException e) {
                // The connection closed; the writer ends it on the other side.
              } finally {
                queue.add(END);
              }
            },
            "latency-proxy-read");
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
                  out.write(c.bytes());
                  out.flush();
                }
              } catch (IOException | InterruptedException e) {
                // Closed or stopped.
              } finally {
                closeQuietly(to);
                closeQuietly(from);
              }
            },
            "latency-proxy-write");
    reader.setDaemon(true);
    writer.setDaemon(true);
    reader.start();
    writer.start();
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // Nothing to do.
    }
  }

  @Override
  public void close() throws IOException {
    server.close();
  }
}
