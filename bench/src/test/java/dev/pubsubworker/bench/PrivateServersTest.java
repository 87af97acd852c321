package dev.pubsubworker.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The benchmarks' private servers start on ports of their own, answer, and are gone after close.
 * Needs {@code redis-server} and PostgreSQL's {@code initdb}: under {@code CI=true} their absence
 * fails the test; elsewhere it skips, naming what to install or set.
 */
class PrivateServersTest {

  @Test
  void a_private_redis_and_postgresql_answer_and_are_stopped_on_close() throws Exception {
    PrivateServers servers;
    try {
      servers = PrivateServers.start(true, true);
    } catch (IOException e) {
      if ("true".equals(System.getenv("CI"))) {
        throw e;
      }
      Assumptions.abort(
          "needs redis-server on the PATH and PostgreSQL's initdb (set PG_BIN): " + e.getMessage());
      return;
    }
    Endpoints shared = new Endpoints("redis://127.0.0.1:6379", "jdbc:none", "u", "p");
    Endpoints mine;
    try (servers) {
      mine = servers.endpoints(shared);
      assertThat(servers.description()).contains("redis-server on").contains("PostgreSQL");
      assertThat(mine.redisUri()).isNotEqualTo(shared.redisUri());
      assertThat(ping(URI.create(mine.redisUri()))).isEqualTo("+PONG");
      try (Connection c = DriverManager.getConnection(mine.jdbcUrl(), mine.jdbcUser(), "");
          Statement st = c.createStatement();
          ResultSet rs = st.executeQuery("SHOW port")) {
        rs.next();
        assertThat(mine.jdbcUrl()).contains(":" + rs.getString(1) + "/");
      }
    }
    URI redis = URI.create(mine.redisUri());
    assertThatThrownBy(() -> ping(redis)).isInstanceOf(IOException.class);
    URI pg = URI.create(mine.jdbcUrl().substring("jdbc:".length()));
    assertThatThrownBy(() -> connect(pg.getPort()).close()).isInstanceOf(IOException.class);
  }

  private static String ping(URI redis) throws IOException {
    try (Socket s = connect(redis.getPort())) {
      OutputStream out = s.getOutputStream();
      out.write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = s.getInputStream();
      byte[] reply = new byte[5];
      int n = in.readNBytes(reply, 0, 5);
      return new String(reply, 0, n, StandardCharsets.US_ASCII);
    }
  }

  private static Socket connect(int port) throws IOException {
    Socket s = new Socket();
    try {
      s.connect(new InetSocketAddress("127.0.0.1", port), 2000);
      s.setSoTimeout(5000);
      return s;
    } catch (IOException e) {
      s.close();
      throw e;
    }
  }
}
