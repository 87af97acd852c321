package dev.pubsubworker.runtime.config;

import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks a JDBC URL's syntax without connecting: a supported database ({@code jdbc:postgresql:},
 * {@code jdbc:mysql:}, {@code jdbc:mariadb:}, {@code jdbc:h2:}), for network databases a host list
 * whose ports are in 1..65535, and a JDBC driver on the class path that accepts the URL (drivers
 * parse, they do not connect, in {@code acceptsURL}).
 */
final class JdbcUrlSyntax {

  private static final Pattern NETWORK =
      Pattern.compile("jdbc:(postgresql|mysql|mariadb)://([^/?#]*)(/[^?#]*)?([?#].*)?");

  private JdbcUrlSyntax() {}

  /** What is wrong with {@code url}, if anything; the text never repeats a password. */
  static Optional<String> problem(String url) {
    String shown = "'" + Secrets.maskUri(url) + "'";
    if (!url.matches("jdbc:(postgresql|mysql|mariadb|h2):.*")) {
      return Optional.of(
          "must be a jdbc:postgresql:, jdbc:mysql:, jdbc:mariadb: or jdbc:h2: URL, but was "
              + shown);
    }
    if (url.matches("jdbc:(postgresql|mysql|mariadb)://.*")) {
      Matcher m = NETWORK.matcher(url);
      if (!m.matches() || m.group(2).isEmpty()) {
        return Optional.of("must be jdbc:DB://host[:port]/database, but was " + shown);
      }
      for (String host : m.group(2).split(",", -1)) {
        String hostPort = host.contains("@") ? host.substring(host.lastIndexOf('@') + 1) : host;
        Optional<HostPortSyntax.Problem> p = HostPortSyntax.check(hostPort, false);
        if (p.isPresent()) {
          return Optional.of(
              p.get() == HostPortSyntax.Problem.PORT_RANGE
                  ? "has a port outside 1..65535 in " + shown
                  : "has an invalid host '" + hostPort + "' in " + shown);
        }
      }
    } else if (url.matches("jdbc:(mysql|mariadb):.*")) {
      return Optional.of("must be jdbc:DB://host[:port]/database, but was " + shown);
    }
    try {
      DriverManager.getDriver(url);
    } catch (SQLException e) {
      return Optional.of(
          "no JDBC driver on the class path accepts "
              + shown
              + (url.startsWith("jdbc:mysql:")
                  ? "; for MySQL use jdbc:mariadb://host[:port]/database (the bundled driver)"
                  : ""));
    }
    return Optional.empty();
  }
}
