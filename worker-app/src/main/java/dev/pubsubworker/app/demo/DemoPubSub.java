package dev.pubsubworker.app.demo;

import java.util.Optional;

/**
 * Where the demo's Pub/Sub comes from ({@code --pubsub}): the embedded server in the demo's own
 * process (the default: nothing to install), Google's emulator started from the Google Cloud CLI,
 * or a server that already runs at {@code host:port} (Google's emulator or a standalone embedded
 * server).
 *
 * @param source which of the three
 * @param hostPort where the running server is; present exactly for {@link Source#RUNNING}
 */
public record DemoPubSub(Source source, Optional<String> hostPort) {

  /** The kinds of Pub/Sub the demo can use. */
  public enum Source {
    /** The embedded server, started in the demo's process on a free loopback port. */
    EMBEDDED,
    /** Google's emulator from the Google Cloud CLI, started by the demo on a free port. */
    GOOGLE_EMULATOR,
    /** A server that already runs at {@link #hostPort()}. */
    RUNNING
  }

  /** The default: the embedded server. */
  public static final DemoPubSub EMBEDDED = new DemoPubSub(Source.EMBEDDED, Optional.empty());

  /**
   * Checks that a host:port is present exactly for {@link Source#RUNNING}.
   *
   * @throws IllegalArgumentException if not
   */
  public DemoPubSub {
    if (hostPort.isPresent() != (source == Source.RUNNING)) {
      throw new IllegalArgumentException(
          "a host:port goes with a running server only, but was " + source + " " + hostPort);
    }
  }

  /**
   * Parses {@code embedded}, {@code emulator} or {@code HOST:PORT} (port 1..65535).
   *
   * @throws IllegalArgumentException naming the value when it is none of them
   */
  public static DemoPubSub parse(String value) {
    String v = value.trim();
    if (v.equalsIgnoreCase("embedded")) {
      return EMBEDDED;
    }
    if (v.equalsIgnoreCase("emulator")) {
      return new DemoPubSub(Source.GOOGLE_EMULATOR, Optional.empty());
    }
    int colon = v.lastIndexOf(':');
    if (colon > 0 && colon < v.length() - 1 && v.substring(colon + 1).matches("[0-9]{1,5}")) {
      int port = Integer.parseInt(v.substring(colon + 1));
      String host = v.substring(0, colon);
      if (port >= 1 && port <= 65_535 && !host.contains("/") && !host.isBlank()) {
        return new DemoPubSub(Source.RUNNING, Optional.of(v));
      }
    }
    throw new IllegalArgumentException(
        "must be embedded, emulator or HOST:PORT, but was '" + value + "'");
  }
}
