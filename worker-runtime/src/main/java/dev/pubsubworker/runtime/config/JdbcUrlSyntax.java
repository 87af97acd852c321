package dev.pubsubworker.runtime.config;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks a JDBC URL's syntax without connecting: a supported database ({@code jdbc:postgresql:},
 * {@code jdbc:mysql:}, {@code jdbc:mariadb:}, {@code jdbc:h2:}), for network databases a host list
 * whose ports are in 1..65535, and a JDBC driver on the class path that accepts the URL (drivers
 * parse, they do not connect, in {@code acceptsURL}).
 *
 * <p>It also refuses the forms the bundled drivers do not read as their writer meant, because the
 * driver then quotes the misread part — the password — in its errors ({@code UnknownHostException:
 * user:pw@db}, {@code database "orders;password=pw" does not exist}): a {@code user:password@}
 * userinfo (pgjdbc, MariaDB Connector/J and H2 read none), {@code ;name=value} settings in a
 * PostgreSQL or MariaDB URL, {@code user}/{@code password} inside MariaDB's {@code address=(…)},
 * {@code ?name=value} in an H2 URL, and for PostgreSQL parameters that are not valid
 * percent-encoding or hold a {@code +} in a secret (pgjdbc decodes it to a space). Those problems
 * never quote the URL.
 */
final class JdbcUrlSyntax {

  private static final Pattern NETWORK =
      Pattern.compile("jdbc:(postgresql|mysql|mariadb)://([^/?#]*)(/[^?#]*)?([?#].*)?");

  /** MariaDB's {@code address=(host=db)(port=3306)}: its {@code (key=value)} pairs. */
  private static final Pattern ADDRESS = Pattern.compile("address=((?:\\([^()]*\\))+)");

  private static final Pattern ADDRESS_PAIR = Pattern.compile("\\(\\s*([^=()]*?)\\s*=([^()]*)\\)");

  private static final Pattern ADDRESS_CREDENTIALS =
      Pattern.compile("(?i)\\(\\s*(?:user|password)\\s*=");

  private static final Pattern QUESTION_PARAMETER = Pattern.compile("\\?[\\w.-]+=");

  private static final String CREDENTIAL_SETTINGS =
      "put the user and password in lock-store.sql.user and lock-store.sql.password";

  private JdbcUrlSyntax() {}

  /** What is wrong with {@code url}, if anything; the text never repeats a password. */
  static Optional<String> problem(String url) {
    String shown = "'" + Secrets.maskUri(url) + "'";
    if (!url.matches("jdbc:(postgresql|mysql|mariadb|h2):.*")) {
      return Optional.of(
          "must be a jdbc:postgresql:, jdbc:mysql:, jdbc:mariadb: or jdbc:h2: URL, but was "
              + shown);
    }
    Optional<String> misread = unreadForm(url);
    if (misread.isPresent()) {
      return misread;
    }
    if (url.matches("jdbc:(postgresql|mysql|mariadb)://.*")) {
      Matcher m = NETWORK.matcher(url);
      if (m.matches() && m.group(2).isEmpty() && viaSocketFactory(m)) {
        return driverProblem(url, shown); // the factory reaches the database (Cloud SQL connector)
      }
      if (!m.matches() || m.group(2).isEmpty()) {
        return Optional.of("must be jdbc:DB://host[:port]/database, but was " + shown);
      }
      for (String host : m.group(2).split(",", -1)) {
        // Only a driver of its own (MySQL Connector/J) gets this far with a userinfo.
        String hostPort = host.substring(host.lastIndexOf('@') + 1);
        Optional<HostPortSyntax.Problem> p =
            hostProblem(hostPort, !m.group(1).equals("postgresql"));
        if (p.isPresent() && url.contains("@")) {
          // What looks like a host may be part of a password that holds '/', '?' or '#'.
          return Optional.of(
              "has an invalid host or port (where the URL has '@': a password belongs in"
                  + " lock-store.sql.password)");
        }
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
    return driverProblem(url, shown);
  }

  /**
   * A PostgreSQL URL without a host whose connections a socket factory makes ({@code
   * socketFactory=}), as the Cloud SQL Java Connector's {@code
   * jdbc:postgresql:///DB?cloudSqlInstance=P:R:I&socketFactory=com.google.cloud.sql.postgres.SocketFactory}:
   * the factory, not the host, says where the database is.
   */
  private static boolean viaSocketFactory(Matcher network) {
    String query = network.group(4) == null ? "" : network.group(4);
    return network.group(1).equals("postgresql")
        && query.matches("[?](.*&)?socketFactory=[^&#]+.*");
  }

  /** Whether a driver on the class path accepts {@code url}. */
  private static Optional<String> driverProblem(String url, String shown) {
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

  /**
   * A form the driver that would read {@code url} does not parse the way it was meant, with the
   * form to use instead; never quotes the URL.
   */
  private static Optional<String> unreadForm(String url) {
    if (url.startsWith("jdbc:postgresql:")) {
      return postgresForm(url);
    }
    if (url.startsWith("jdbc:mariadb:") || url.startsWith("jdbc:mysql:") && readByMariaDb(url)) {
      return mariaDbForm(url);
    }
    if (url.startsWith("jdbc:h2:")) {
      return h2Form(url);
    }
    return Optional.empty();
  }

  /** pgjdbc: host list and database before the first {@code ?}, then {@code &}-separated. */
  private static Optional<String> postgresForm(String url) {
    int query = url.indexOf('?');
    String server = query < 0 ? url : url.substring(0, query);
    if (Secrets.userInfo(url).isPresent() || server.contains("@")) {
      return Optional.of(
          userInfoProblem(
              "PostgreSQL's driver",
              "the host name",
              "user and password parameters (percent-encoded); a database name with '@' is"
                  + " written %40"));
    }
    if (server.contains(";")) {
      return Optional.of(semicolonProblem("PostgreSQL's driver", " (percent-encoded)"));
    }
    if (query < 0) {
      return Optional.empty();
    }
    for (String parameter : url.substring(query + 1).split("&")) {
      int eq = parameter.indexOf('=');
      if (eq < 0) {
        continue;
      }
      String name = parameter.substring(0, eq);
      String value = parameter.substring(eq + 1);
      try {
        URLDecoder.decode(value, StandardCharsets.UTF_8);
      } catch (IllegalArgumentException e) {
        return Optional.of(
            "has parameter '"
                + name
                + "' that is not valid percent-encoding: PostgreSQL's driver percent-decodes"
                + " parameters (and accepts no URL where one fails), so write a literal % as %25");
      }
      if (Secrets.isSecretName(name) && value.contains("+")) {
        return Optional.of(
            "has '+' in parameter '"
                + name
                + "', which PostgreSQL's driver decodes to a space: write %2B for a '+' (or %20"
                + " for a space)");
      }
    }
    return Optional.empty();
  }

  /**
   * MariaDB Connector/J: the host list (skipping {@code address=(…)} blocks) before the first
   * {@code /} or {@code ?}; parameters after {@code ?}, {@code &}-separated, not percent-decoded.
   */
  private static Optional<String> mariaDbForm(String url) {
    int slashes = url.indexOf("//");
    if (slashes < 0) {
      return Optional.empty();
    }
    String rest = url.substring(slashes + 2);
    int skip = 0;
    for (Matcher a = ADDRESS.matcher(rest); a.find(); ) {
      if (ADDRESS_CREDENTIALS.matcher(a.group(1)).find()) {
        return Optional.of(
            "has user or password inside address=(...), which MariaDB Connector/J ignores (it"
                + " logs in without them): "
                + CREDENTIAL_SETTINGS
                + ", or in the URL's user and password parameters");
      }
      skip = a.end();
    }
    int query = rest.indexOf('?');
    int slash = rest.indexOf('/', skip);
    int hostsEnd = slash < 0 ? rest.length() : slash;
    if (query >= 0 && query < hostsEnd) {
      hostsEnd = query;
    }
    String server = query < 0 ? rest : rest.substring(0, query);
    if (Secrets.userInfo(url).isPresent() || rest.substring(0, hostsEnd).contains("@")) {
      return Optional.of(
          userInfoProblem(
              "MariaDB Connector/J",
              "the host and port",
              "user and password parameters (taken as written: the driver does not"
                  + " percent-decode, so a password in the URL cannot hold '&')"));
    }
    if (server.contains(";")) {
      return Optional.of(semicolonProblem("MariaDB Connector/J", ""));
    }
    return Optional.empty();
  }

  /** H2: settings after {@code ;}; a TCP or SSL server as {@code tcp://host[:port]/path}. */
  private static Optional<String> h2Form(String url) {
    String lower = url.toLowerCase(Locale.ROOT);
    if (lower.startsWith("jdbc:h2:tcp://") || lower.startsWith("jdbc:h2:ssl://")) {
      String server = url.substring(url.indexOf("://") + 3);
      int slash = server.indexOf('/');
      if ((slash < 0 ? server : server.substring(0, slash)).contains("@")
          || Secrets.userInfo(url).isPresent()) {
        return Optional.of(
            userInfoProblem("H2", "the host and port", ";USER and ;PASSWORD settings"));
      }
    }
    if (QUESTION_PARAMETER.matcher(url).find()) {
      return Optional.of(
          "has a ?name=value parameter, which H2 does not read (it becomes part of the database"
              + " name): write H2 settings as ;NAME=value, and the password in"
              + " lock-store.sql.password or the URL's ;PASSWORD setting");
    }
    return Optional.empty();
  }

  private static String userInfoProblem(String driver, String readAs, String urlForm) {
    return "has user:password@ before the host, which "
        + driver
        + " does not read (it takes it for "
        + readAs
        + " and quotes it in its errors): "
        + CREDENTIAL_SETTINGS
        + ", or in the URL's "
        + urlForm;
  }

  private static String semicolonProblem(String driver, String encoding) {
    return "has ';' before its parameters: "
        + driver
        + " reads no ;name=value settings (they become part of the database name, and its errors"
        + " quote them); write parameters as ?name=value&name=value, and the password in"
        + " lock-store.sql.password or in the URL's password parameter"
        + encoding;
  }

  /** Whether the bundled MariaDB driver, not another one, takes a {@code jdbc:mysql:} URL. */
  private static boolean readByMariaDb(String url) {
    try {
      Driver d = DriverManager.getDriver(url);
      return d.getClass().getName().startsWith("org.mariadb.");
    } catch (SQLException e) {
      return false;
    }
  }

  /** A host of the list: {@code host[:port]}, or for MySQL and MariaDB {@code address=(…)}. */
  private static Optional<HostPortSyntax.Problem> hostProblem(String host, boolean addressForm) {
    Matcher address = ADDRESS.matcher(host);
    if (!addressForm || !address.matches()) {
      return HostPortSyntax.check(host, false);
    }
    boolean named = false;
    for (Matcher pair = ADDRESS_PAIR.matcher(address.group(1)); pair.find(); ) {
      String key = pair.group(1).toLowerCase(Locale.ROOT);
      String value = pair.group(2).trim();
      if (key.equals("host")) {
        named = true;
        Optional<HostPortSyntax.Problem> p = HostPortSyntax.check(value, false);
        if (p.isPresent()) {
          return p;
        }
      } else if (key.equals("port") && HostPortSyntax.check("h:" + value, true).isPresent()) {
        return HostPortSyntax.check("h:" + value, true);
      }
    }
    return named ? Optional.empty() : Optional.of(HostPortSyntax.Problem.SYNTAX);
  }
}
