package dev.pubsubworker.testservices;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.Properties;

/**
 * Where and as whom to connect to a SQL database. Parses the {@code POSTGRES_URL} and {@code
 * MARIADB_URL} forms: a JDBC URL ({@code jdbc:postgresql://…}, {@code jdbc:mariadb://…}, {@code
 * jdbc:mysql://…}) or a URI ({@code postgresql://user:password@host:port/db}, {@code postgres://…},
 * {@code mariadb://…}, {@code mysql://…}).
 */
record JdbcEndpoint(String jdbcUrl, String user, String password) {

  /**
   * Parses an environment variable's value. User and password come from the URI's user info, else
   * from the JDBC URL's {@code user}/{@code password} parameters, else from {@code <PREFIX>_USER}
   * and {@code <PREFIX>_PASSWORD} (e.g. {@code POSTGRES_USER}).
   *
   * @throws IllegalArgumentException naming the problem when the value is not such a URL
   */
  static JdbcEndpoint parse(
      SqlDatabase.Product product, String value, ServiceEnvironment environment) {
    String prefix = product == SqlDatabase.Product.POSTGRES ? "POSTGRES" : "MARIADB";
    String envUser = environment.variable(prefix + "_USER").orElse("");
    String envPassword = environment.variable(prefix + "_PASSWORD").orElse("");
    if (value.startsWith("jdbc:")) {
      String url = value;
      if (product == SqlDatabase.Product.MARIADB && url.startsWith("jdbc:mysql:")) {
        // MariaDB Connector/J only takes jdbc:mysql: with permitMysqlScheme; the server is the
        // same.
        url = "jdbc:mariadb:" + url.substring("jdbc:mysql:".length());
      }
      String expected =
          product == SqlDatabase.Product.POSTGRES ? "jdbc:postgresql:" : "jdbc:mariadb:";
      if (!url.startsWith(expected)) {
        throw new IllegalArgumentException("'" + redact(value) + "' is not a " + expected + " URL");
      }
      String user = queryParameter(url, "user").orElse(envUser);
      String password = queryParameter(url, "password").orElse(envPassword);
      return new JdbcEndpoint(url, user, password);
    }
    URI uri;
    try {
      uri = new URI(value);
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException("'" + redact(value) + "' is not a URL: " + e.getReason());
    }
    String scheme = uri.getScheme() == null ? "" : uri.getScheme();
    boolean schemeMatches =
        product == SqlDatabase.Product.POSTGRES
            ? scheme.equals("postgresql") || scheme.equals("postgres")
            : scheme.equals("mariadb") || scheme.equals("mysql");
    String path = uri.getRawPath() == null ? "" : uri.getRawPath();
    if (!schemeMatches || uri.getHost() == null || path.length() < 2) {
      throw new IllegalArgumentException(
          "'"
              + redact(value)
              + "' is not a "
              + (product == SqlDatabase.Product.POSTGRES
                  ? "postgresql://user:password@host:port/db"
                  : "mariadb://user:password@host:port/db")
              + " URL");
    }
    int port = uri.getPort();
    if (port < 0) {
      port = product == SqlDatabase.Product.POSTGRES ? 5432 : 3306;
    }
    String jdbcScheme =
        product == SqlDatabase.Product.POSTGRES ? "jdbc:postgresql://" : "jdbc:mariadb://";
    String url =
        jdbcScheme
            + uri.getHost()
            + ":"
            + port
            + path
            + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
    String user = envUser;
    String password = envPassword;
    String userInfo = uri.getRawUserInfo();
    if (userInfo != null) {
      int colon = userInfo.indexOf(':');
      user = decode(colon < 0 ? userInfo : userInfo.substring(0, colon));
      password = colon < 0 ? envPassword : decode(userInfo.substring(colon + 1));
    }
    return new JdbcEndpoint(url, user, password);
  }

  /** Connection properties for the driver: user and password when given, and short timeouts. */
  Properties connectionProperties(SqlDatabase.Product product) {
    Properties properties = new Properties();
    if (!user.isEmpty()) {
      properties.setProperty("user", user);
    }
    if (!password.isEmpty()) {
      properties.setProperty("password", password);
    }
    if (product == SqlDatabase.Product.POSTGRES) {
      properties.setProperty("connectTimeout", "3"); // seconds
    } else {
      properties.setProperty("connectTimeout", "3000"); // milliseconds
    }
    return properties;
  }

  /** The URL with any {@code password=} parameter masked, plus the user, for reports. */
  String redactedUrl() {
    return redact(jdbcUrl) + (user.isEmpty() ? "" : " as " + user);
  }

  static String redact(String url) {
    return url.replaceAll("(?i)(password=)[^&;]*", "$1***")
        .replaceAll("(//[^/:@]*:)[^@/]*@", "$1***@");
  }

  private static Optional<String> queryParameter(String url, String name) {
    int question = url.indexOf('?');
    if (question < 0) {
      return Optional.empty();
    }
    for (String pair : url.substring(question + 1).split("[&;]")) {
      int equals = pair.indexOf('=');
      if (equals > 0 && pair.substring(0, equals).equalsIgnoreCase(name)) {
        return Optional.of(decode(pair.substring(equals + 1)));
      }
    }
    return Optional.empty();
  }

  private static String decode(String raw) {
    return URLDecoder.decode(raw, StandardCharsets.UTF_8);
  }

  @Override
  public String toString() {
    return redactedUrl();
  }
}
