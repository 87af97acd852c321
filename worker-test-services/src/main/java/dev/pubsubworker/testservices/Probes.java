package dev.pubsubworker.testservices;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.time.Duration;

/**
 * Readiness checks: does something answer on a port, does an emulator answer its HTTP health check.
 * Each throws an {@link IOException} whose message says what was seen.
 */
final class Probes {

  private Probes() {}

  /**
   * Succeeds when {@code GET http://host:port/} answers 200, which Google's Pub/Sub, Datastore and
   * Firestore emulators do ("Ok") as soon as they serve requests.
   */
  static void httpOk(HostPort target, Duration timeout) throws IOException {
    HttpURLConnection connection =
        (HttpURLConnection) URI.create("http://" + target + "/").toURL().openConnection();
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
        throw new IOException("GET http://" + target + "/ answered HTTP " + status);
      }
    } finally {
      connection.disconnect();
    }
  }

  /** Whether a TCP connection to {@code target} opens within {@code timeout}. */
  static boolean tcpOpen(HostPort target, Duration timeout) {
    try (Socket socket = new Socket()) {
      socket.connect(
          new InetSocketAddress(target.host(), target.port()), Math.toIntExact(timeout.toMillis()));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * A TCP port on 127.0.0.1 that was free a moment ago. Another process may take it before the
   * caller binds it: {@link ManagedProcess} retries on a fresh port when that happens.
   */
  static int freeLoopbackPort() throws IOException {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(false);
      socket.bind(new InetSocketAddress("127.0.0.1", 0));
      return socket.getLocalPort();
    }
  }
}
