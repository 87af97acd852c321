package dev.pubsubworker.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pubsubworker.testservices.TcpProxy;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;

/**
 * The services the main-style benchmarks use, from the environment the tests and the JMH benchmarks
 * read: {@code REDIS_URL} (default {@code redis://127.0.0.1:6379}) and {@code POSTGRES_URL} (a JDBC
 * URL or {@code postgresql://user:password@host:port/db}, default {@code
 * jdbc:postgresql://127.0.0.1:5432/test}) with {@code POSTGRES_USER} (default {@code postgres}) and
 * {@code POSTGRES_PASSWORD}. Immutable.
 */
record Endpoints(String redisUri, String jdbcUrl, String jdbcUser, String jdbcPassword) {

  /** The endpoints the environment names, or the local services. */
  static Endpoints fromEnvironment() {
    String redis = System.getenv().getOrDefault("REDIS_URL", "redis://127.0.0.1:6379");
    String url =
        System.getenv().getOrDefault("POSTGRES_URL", "jdbc:postgresql://127.0.0.1:5432/test");
    String user = System.getenv().getOrDefault("POSTGRES_USER", "postgres");
    String password = System.getenv().getOrDefault("POSTGRES_PASSWORD", "");
    if (!url.startsWith("jdbc:")) {
      URI uri = URI.create(url);
      if (uri.getUserInfo() != null) {
        String[] parts = uri.getUserInfo().split(":", 2);
        user = parts[0];
        password = parts.length > 1 ? parts[1] : password;
      }
      url =
          "jdbc:postgresql://"
              + uri.getHost()
              + (uri.getPort() > 0 ? ":" + uri.getPort() : "")
              + uri.getPath();
    }
    return new Endpoints(redis, url, user, password);
  }

  /** The same endpoints with another Redis URI. */
  Endpoints withRedis(String uri) {
    return new Endpoints(uri, jdbcUrl, jdbcUser, jdbcPassword);
  }

  /**
   * The same servers reached through {@link TcpProxy} relays that add {@code oneWay} in each
   * direction, as a network between the worker and its store would; this object if {@code oneWay}
   * is zero. The relays are {@linkplain TcpProxy#calibrated calibrated}, and what one delivers is
   * printed (min / median / p90 of 200 one-byte round trips, beside the same straight over
   * loopback), since that, not what was asked, is the latency the figures are taken at. The relays
   * live until the process exits.
   */
  Endpoints withLatency(Duration oneWay) throws IOException {
    if (oneWay.isZero()) {
      return this;
    }
    URI r = URI.create(redisUri);
    TcpProxy redisRelay =
        TcpProxy.calibrated(r.getHost(), r.getPort() > 0 ? r.getPort() : 6379, oneWay);
    TcpProxy.RoundTrip direct = TcpProxy.measure(null, 200);
    TcpProxy.RoundTrip relayed = TcpProxy.measure(redisRelay.delay(), 200);
    System.out.printf(
        java.util.Locale.ROOT,
        "relay: asked %.3f ms each way (%.3f ms round trip), waits %.3f ms; round trips"
            + " min / median / p90: through the relay %s, loopback without it %s%n",
        oneWay.toNanos() / 1e6,
        2 * oneWay.toNanos() / 1e6,
        redisRelay.delay().toNanos() / 1e6,
        relayed,
        direct);
    String redis =
        r.getScheme()
            + "://"
            + (r.getRawUserInfo() != null ? r.getRawUserInfo() + "@" : "")
            + "127.0.0.1:"
            + redisRelay.port()
            + (r.getRawPath() == null ? "" : r.getRawPath());
    URI j = URI.create(jdbcUrl.substring("jdbc:".length()));
    TcpProxy sqlRelay =
        TcpProxy.start(j.getHost(), j.getPort() > 0 ? j.getPort() : 5432, redisRelay.delay());
    String url =
        "jdbc:"
            + j.getScheme()
            + "://127.0.0.1:"
            + sqlRelay.port()
            + j.getRawPath()
            + (j.getRawQuery() != null ? "?" + j.getRawQuery() : "");
    return new Endpoints(redis, url, jdbcUser, jdbcPassword);
  }

  /** The JDBC URL of database {@code database} on the same PostgreSQL server. */
  String jdbcUrlOf(String database) {
    int slash = jdbcUrl.lastIndexOf('/');
    int query = jdbcUrl.indexOf('?', slash);
    return jdbcUrl.substring(0, slash + 1) + database + (query < 0 ? "" : jdbcUrl.substring(query));
  }

  /** A HikariCP pool of {@code size} connections to {@code url} with these credentials. */
  HikariDataSource pool(String name, String url, int size) {
    HikariConfig config = new HikariConfig();
    config.setPoolName(name);
    config.setJdbcUrl(url);
    config.setUsername(jdbcUser);
    if (!jdbcPassword.isEmpty()) {
      config.setPassword(jdbcPassword);
    }
    config.setMaximumPoolSize(size);
    return new HikariDataSource(config);
  }
}
