package dev.pubsubworker.emulators;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Duration;

/** The probes a launcher needs: a free loopback port, and whether an emulator answers HTTP. */
public final class Probes {

  private Probes() {}

  /**
   * Succeeds when {@code GET http://hostPort/} answers 200, which Google's Pub/Sub, Datastore and
   * Firestore emulators do ("Ok") as soon as they serve requests.
   *
   * @param hostPort {@code host:port}, an IPv6 host in brackets
   * @param timeout for connecting and, separately, for reading the answer
   * @throws IOException when nothing answers in time, or the answer is not 200 (the message gives
   *     the status)
   * @throws IllegalArgumentException when {@code http://hostPort/} is not a URI
   */
  public static void httpOk(String hostPort, Duration timeout) throws IOException {
    HttpURLConnection connection =
        (HttpURLConnection) URI.create("http://" + hostPort + "/").toURL().openConnection();
    int millis = Math.toIntExact(timeout.toMillis());
    connection.setConnectTimeout(millis);
    connection.setReadTimeout(millis);
    connection.setUseCaches(false);
    try {
      int status = connection.getResponseCode();
      try (InputStream body =
          status < 400 ? connection.getInputStream() : connection.getErrorStream()) {
        if (body != null) {
          body.readAllBytes();
        }
      }
      if (status != 200) {
        throw new IOException("GET http://" + hostPort + "/ answered HTTP " + status);
      }
    } finally {
      connection.disconnect();
    }
  }

  /**
   * A TCP port on 127.0.0.1 that was free a moment ago. Another process may take it before the
   * caller binds it: {@link ManagedProcess} retries on a fresh port when that happens.
   *
   * @throws IOException when no port can be bound
   */
  public static int freeLoopbackPort() throws IOException {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(false);
      socket.bind(new InetSocketAddress("127.0.0.1", 0));
      return socket.getLocalPort();
    }
  }
}
