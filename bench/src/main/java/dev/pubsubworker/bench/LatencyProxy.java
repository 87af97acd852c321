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
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * A TCP relay on a loopback port that forwards each direction of every connection to {@code target}
 * after {@code oneWay}, keeping the bytes' order: a local server then answers as one across a
 * network would, a round trip taking at least twice {@code oneWay}, while requests sent in a row
 * (pipelined) still overlap in flight. For benchmarks only: one thread per direction of each
 * connection, daemon threads, no limits.
 */
final class LatencyProxy implements AutoCloseable {

  private record Chunk(long dueNanos, byte[] bytes) {}

  private static final Chunk END = new Chunk(0, new byte[0]);

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

  /** The loopback port clients connect to. */
  int port() {
    return server.getLocalPort();
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
