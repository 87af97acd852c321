package dev.pubsubworker.runtime.config;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one check of {@code host[:port]} text in the config: a name or IPv4 address ({@code
 * [A-Za-z0-9._-]+}) or a bracketed IPv6 address, then optionally {@code :port} with a port in
 * 1..65535.
 */
final class HostPortSyntax {

  /** What is wrong with a host:port text. */
  enum Problem {
    /** Not a host, optionally followed by {@code :digits}; or the port is required and missing. */
    SYNTAX,
    /** The port is outside 1..65535. */
    PORT_RANGE
  }

  private static final Pattern HOST_PORT =
      Pattern.compile("(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9._-]+)(?::(\\d{1,5}))?");

  private HostPortSyntax() {}

  /** What is wrong with {@code text}, if anything; {@code portRequired} rejects a bare host. */
  static Optional<Problem> check(String text, boolean portRequired) {
    Matcher m = HOST_PORT.matcher(text);
    if (!m.matches() || (portRequired && m.group(2) == null)) {
      return Optional.of(Problem.SYNTAX);
    }
    if (m.group(2) != null) {
      int port = Integer.parseInt(m.group(2));
      if (port < 1 || port > 65535) {
        return Optional.of(Problem.PORT_RANGE);
      }
    }
    return Optional.empty();
  }
}
