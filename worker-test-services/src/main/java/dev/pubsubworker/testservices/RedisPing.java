package dev.pubsubworker.testservices;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/**
 * Checks that a Redis server answers {@code PING}, speaking RESP over a plain socket so that
 * resolving Redis needs no client library on the class path. Honours the password (and ACL user) of
 * a {@code redis://user:password@host:port} URI and TLS for {@code rediss://}.
 */
final class RedisPing {

  private RedisPing() {}

  /**
   * Sends {@code AUTH} (when the URI carries a password) and {@code PING}.
   *
   * @throws IOException saying what went wrong: refused, timed out, an error reply
   * @throws IllegalArgumentException when the URI is not a {@code redis://} or {@code rediss://}
   *     URI with a host
   */
  static void ping(URI uri, Duration timeout) throws IOException {
    String scheme = uri.getScheme();
    if (!"redis".equals(scheme) && !"rediss".equals(scheme)) {
      throw new IllegalArgumentException(
          "'" + redact(uri) + "' is not a redis:// or rediss:// URI");
    }
    if (uri.getHost() == null) {
      throw new IllegalArgumentException("'" + redact(uri) + "' has no host");
    }
    int port = uri.getPort() < 0 ? 6379 : uri.getPort();
    int millis = Math.toIntExact(timeout.toMillis());
    try (Socket plain = new Socket()) {
      plain.connect(new InetSocketAddress(uri.getHost(), port), millis);
      plain.setSoTimeout(millis);
      Socket socket = plain;
      if ("rediss".equals(scheme)) {
        SSLSocket tls =
            (SSLSocket)
                ((SSLSocketFactory) SSLSocketFactory.getDefault())
                    .createSocket(plain, uri.getHost(), port, true);
        tls.startHandshake();
        socket = tls;
      }
      try (Socket channel = socket) {
        OutputStream out = channel.getOutputStream();
        InputStream in = new BufferedInputStream(channel.getInputStream());
        List<String> auth = authCommand(uri);
        if (!auth.isEmpty()) {
          String reply = command(out, in, auth);
          if (!reply.startsWith("+OK")) {
            throw new IOException("AUTH was refused: " + reply);
          }
        }
        String reply = command(out, in, List.of("PING"));
        if (!reply.startsWith("+PONG")) {
          throw new IOException("PING answered " + reply);
        }
      }
    }
  }

  /** The URI with any password replaced by {@code ***}, for messages and reports. */
  static String redact(URI uri) {
    String userInfo = uri.getRawUserInfo();
    if (userInfo == null) {
      return uri.toString();
    }
    int colon = userInfo.indexOf(':');
    String safe = colon < 0 ? "***" : userInfo.substring(0, colon) + ":***";
    return uri.toString().replace(userInfo + "@", safe + "@");
  }

  private static List<String> authCommand(URI uri) {
    String userInfo = uri.getRawUserInfo();
    if (userInfo == null || userInfo.isEmpty()) {
      return List.of();
    }
    int colon = userInfo.indexOf(':');
    // redis://:password@host is the classic form; redis://user:password@host uses an ACL user;
    // redis://password@host (no colon) is read as a password, as Lettuce does.
    String user = colon < 0 ? "" : decode(userInfo.substring(0, colon));
    String password = colon < 0 ? decode(userInfo) : decode(userInfo.substring(colon + 1));
    List<String> command = new ArrayList<>();
    command.add("AUTH");
    if (!user.isEmpty()) {
      command.add(user);
    }
    command.add(password);
    return command;
  }

  private static String decode(String raw) {
    return URLDecoder.decode(raw, StandardCharsets.UTF_8);
  }

  private static String command(OutputStream out, InputStream in, List<String> args)
      throws IOException {
    ByteArrayOutputStream request = new ByteArrayOutputStream();
    request.writeBytes(("*" + args.size() + "\r\n").getBytes(StandardCharsets.US_ASCII));
    for (String arg : args) {
      byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
      request.writeBytes(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
      request.writeBytes(bytes);
      request.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
    }
    out.write(request.toByteArray());
    out.flush();
    return readLine(in);
  }

  private static String readLine(InputStream in) throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream();
    while (true) {
      int b = in.read();
      if (b < 0) {
        throw new IOException("the server closed the connection");
      }
      if (b == '\n') {
        String text = line.toString(StandardCharsets.UTF_8);
        return text.endsWith("\r") ? text.substring(0, text.length() - 1) : text;
      }
      if (line.size() > 4096) {
        throw new IOException("not a Redis server: no end of line in 4096 bytes");
      }
      line.write(b);
    }
  }
}
