package dev.pubsubworker.testservices;

import java.net.URI;
import java.net.URISyntaxException;

/**
 * A {@code host:port} pair as the emulator environment variables carry it ({@code
 * PUBSUB_EMULATOR_HOST=localhost:8085}); an IPv6 host is written in brackets.
 */
record HostPort(String host, int port) {

  HostPort {
    if (host.isBlank()) {
      throw new IllegalArgumentException("host must not be blank");
    }
    if (port < 1 || port > 65_535) {
      throw new IllegalArgumentException("port must be in 1..65535, but was " + port);
    }
  }

  /**
   * Parses {@code host:port}, tolerating an {@code http://} prefix and a trailing slash.
   *
   * @throws IllegalArgumentException naming the value when it is not {@code host:port}
   */
  static HostPort parse(String value) {
    String trimmed = value.trim();
    if (trimmed.startsWith("http://")) {
      trimmed = trimmed.substring("http://".length());
    }
    if (trimmed.endsWith("/")) {
      trimmed = trimmed.substring(0, trimmed.length() - 1);
    }
    try {
      URI uri = new URI("http://" + trimmed);
      if (uri.getHost() == null || uri.getPort() < 0 || !uri.getRawPath().isEmpty()) {
        throw new IllegalArgumentException("'" + value + "' is not host:port");
      }
      return new HostPort(uri.getHost(), uri.getPort());
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException("'" + value + "' is not host:port", e);
    }
  }

  static HostPort loopback(int port) {
    return new HostPort("127.0.0.1", port);
  }

  @Override
  public String toString() {
    return host + ":" + port;
  }
}
