package dev.pubsubworker.testservices;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.protocol.ProtocolVersion;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Readiness checks: does something answer on a port, does an emulator answer its HTTP health check,
 * does Redis answer {@code PING}. Each throws an {@link IOException} whose message says what was
 * seen.
 */
final class Probes {

  /** One small event loop for every Redis ping of the JVM, created on first use. */
  private static ClientResources redisResources;

  private Probes() {}

  /**
   * Succeeds when the Redis server at {@code uri} answers {@code PING} with {@code PONG}, asked
   * through Lettuce, which honours a password (and ACL user) in {@code
   * redis://user:password@host:port} and TLS for {@code rediss://}.
   *
   * @throws IOException saying what went wrong: refused, timed out, {@code AUTH was refused}
   * @throws IllegalArgumentException when {@code uri} is not a {@code redis://} or {@code
   *     rediss://} URI with a host
   */
  static void redisPing(URI uri, Duration timeout) throws IOException {
    String scheme = uri.getScheme();
    if (!"redis".equals(scheme) && !"rediss".equals(scheme)) {
      throw new IllegalArgumentException(
          "'" + RedisService.redact(uri) + "' is not a redis:// or rediss:// URI");
    }
    if (uri.getHost() == null) {
      throw new IllegalArgumentException("'" + RedisService.redact(uri) + "' has no host");
    }
    RedisURI redisUri = RedisURI.create(uri);
    redisUri.setTimeout(timeout);
    RedisClient client = RedisClient.create(redisResources(), redisUri);
    client.setOptions(
        ClientOptions.builder()
            // RESP2: the handshake is one AUTH, whose refusal is a reply. With RESP3's HELLO and
            // its fallback, a refused password sometimes surfaced as "Connection closed
            // prematurely" instead (seen in CI on Redis 7.0).
            .protocolVersion(ProtocolVersion.RESP2)
            .autoReconnect(false)
            .socketOptions(SocketOptions.builder().connectTimeout(timeout).build())
            .build());
    try (StatefulRedisConnection<String, String> connection = client.connect()) {
      String reply = connection.sync().ping();
      if (!"PONG".equals(reply)) {
        throw new IOException("PING answered " + reply);
      }
    } catch (RedisException e) {
      throw redisFailure(e, uri, timeout);
    } finally {
      client.shutdown(Duration.ZERO, timeout);
    }
  }

  private static final String AUTH_REFUSED = "AUTH was refused: ";

  /**
   * Asks a plain {@code redis://} server with credentials in {@code uri} for {@code AUTH} itself,
   * over a socket of its own: the server's refusal ({@code -WRONGPASS ...}) if it refuses them,
   * null if it accepts them, cannot be asked (TLS, no credentials) or does not answer. Lettuce
   * sometimes reports a refused handshake as the connection having closed (its handshake fails and
   * the channel closes, and the later event wins); this tells the two apart.
   */
  private static String authRefusal(URI uri, Duration timeout) {
    // Lettuce 7 keeps what it parsed behind a reactive credentials provider: read the URI itself.
    String userInfo = uri.getUserInfo();
    if (!"redis".equals(uri.getScheme()) || userInfo == null || userInfo.isEmpty()) {
      return null;
    }
    int colon = userInfo.indexOf(':');
    List<String> command = new ArrayList<>(List.of("AUTH"));
    if (colon < 0) {
      command.add(userInfo);
    } else {
      if (colon > 0) {
        command.add(userInfo.substring(0, colon));
      }
      command.add(userInfo.substring(colon + 1));
    }
    StringBuilder resp = new StringBuilder("*" + command.size() + "\r\n");
    for (String part : command) {
      resp.append('$')
          .append(part.getBytes(StandardCharsets.UTF_8).length)
          .append("\r\n")
          .append(part)
          .append("\r\n");
    }
    try (Socket socket = new Socket()) {
      int millis = (int) Math.max(1, timeout.toMillis());
      socket.connect(
          new InetSocketAddress(uri.getHost(), uri.getPort() < 0 ? 6379 : uri.getPort()), millis);
      socket.setSoTimeout(millis);
      socket.getOutputStream().write(resp.toString().getBytes(StandardCharsets.UTF_8));
      socket.getOutputStream().flush();
      BufferedReader reply =
          new BufferedReader(
              new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
      String line = reply.readLine();
      return line != null && line.startsWith("-") ? line.substring(1) : null;
    } catch (IOException e) {
      return null;
    }
  }

  /**
   * Lettuce's exception as one line: a refused handshake names AUTH (Lettuce's refusal, or the
   * server's answer to {@link #authRefusal} when Lettuce named none), otherwise the root cause.
   */
  private static IOException redisFailure(RedisException e, URI uri, Duration timeout) {
    if (e instanceof RedisCommandTimeoutException) {
      return new IOException("no reply to PING within " + Seconds.format(timeout), e);
    }
    Throwable root = e;
    for (Throwable cause = e; cause != null; cause = cause.getCause()) {
      if (cause instanceof RedisCommandExecutionException refused) {
        return new IOException(AUTH_REFUSED + refused.getMessage(), e);
      }
      if (cause.getMessage() != null && !cause.getMessage().isBlank()) {
        root = cause;
      }
    }
    String refusal = authRefusal(uri, timeout);
    if (refusal != null) {
      return new IOException(AUTH_REFUSED + refusal, e);
    }
    return new IOException(ServiceResolver.describe(root), e);
  }

  private static synchronized ClientResources redisResources() {
    if (redisResources == null) {
      ClientResources resources =
          DefaultClientResources.builder().ioThreadPoolSize(1).computationThreadPoolSize(1).build();
      ShutdownActions.register(
          "Lettuce client resources", () -> resources.shutdown(0, 2, TimeUnit.SECONDS));
      redisResources = resources;
    }
    return redisResources;
  }

  /**
   * Succeeds when {@code GET http://host:port/} answers 200, as Google's emulators do once they
   * serve requests ({@link dev.pubsubworker.emulators.Probes#httpOk}).
   */
  static void httpOk(HostPort target, Duration timeout) throws IOException {
    dev.pubsubworker.emulators.Probes.httpOk(target.toString(), timeout);
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
   * A TCP port on 127.0.0.1 that was free a moment ago (see {@link
   * dev.pubsubworker.emulators.Probes#freeLoopbackPort}).
   */
  static int freeLoopbackPort() throws IOException {
    return dev.pubsubworker.emulators.Probes.freeLoopbackPort();
  }
}
