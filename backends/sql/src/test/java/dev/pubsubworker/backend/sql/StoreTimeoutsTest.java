package dev.pubsubworker.backend.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pubsubworker.core.Claim;
import dev.pubsubworker.core.ClaimRequest;
import dev.pubsubworker.core.ClaimResult;
import dev.pubsubworker.core.LockBackendException;
import dev.pubsubworker.core.LockRecord;
import dev.pubsubworker.core.LockState;
import dev.pubsubworker.testservices.TcpProxy;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The statement and socket timeouts, on real PostgreSQL and MariaDB reached through a {@link
 * TcpProxy}: a database that stops answering mid-verb, or a statement that waits on a lock too
 * long, fails the verb with a {@link LockBackendException} instead of hanging the caller; the
 * backend works again afterwards and nothing is lost.
 */
class StoreTimeoutsTest {

  private static final Duration LEASE = Duration.ofSeconds(30);
  private static final Duration TTL = Duration.ofMinutes(10);

  /** Generous: the verbs must return, how fast is not asserted. */
  private static final Duration RETURNS_WITHIN = Duration.ofSeconds(30);

  private static final Pattern URL = Pattern.compile("^(jdbc:[a-z]+://)([^/:]+):(\\d+)(/.*)$");

  private final ExecutorService caller = Executors.newCachedThreadPool();
  private Databases.Target target;
  private TcpProxy proxy;
  private HikariDataSource pool;
  private CountingDataSource counting;
  private String table;
  private SqlLockBackend backend;

  /** A backend with 1 s statement and 2 s socket timeouts on {@code database} through a proxy. */
  private void open(String database) {
    target = database.equals("postgresql") ? Databases.postgres() : Databases.mariadb();
    Matcher m = URL.matcher(target.jdbcUrl());
    assertThat(m.matches()).as("a jdbc:...://host:port/db URL: %s", target.jdbcUrl()).isTrue();
    proxy = TcpProxy.start(m.group(2), Integer.parseInt(m.group(3)));
    HikariConfig config = new HikariConfig();
    config.setPoolName("store-timeouts");
    config.setJdbcUrl(m.group(1) + proxy.hostPort() + m.group(4));
    if (!target.user().isEmpty()) {
      config.setUsername(target.user());
    }
    if (!target.password().isEmpty()) {
      config.setPassword(target.password());
    }
    config.setMaximumPoolSize(4);
    config.setMinimumIdle(1);
    config.setConnectionTimeout(5_000);
    // No cancelSignalTimeout on PostgreSQL: the server enforces the store's statement timeout, so
    // no driver cancel request (which the frozen proxy would hold too) is ever sent; the socket
    // timeout alone frees the caller.
    pool = new HikariDataSource(config);
    counting = new CountingDataSource(pool);
    table = Databases.uniqueName("timeouts");
    backend =
        SqlLockBackend.create(
            SqlLockSettings.newBuilder()
                .table(table)
                .createTableIfMissing(true)
                .statementTimeout(Duration.ofSeconds(1))
                .socketTimeout(Duration.ofSeconds(2))
                .dataSource(counting.dataSource())
                .build());
  }

  @AfterEach
  void close() throws SQLException {
    caller.shutdownNow();
    if (proxy != null) {
      proxy.resume();
    }
    if (pool != null) {
      pool.close();
    }
    if (proxy != null) {
      proxy.close();
    }
    if (table != null) {
      target.dropTable(table);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgresql", "mariadb"})
  @DisplayName("a database that stops answering mid-claim fails the claim; retried, it wins")
  void a_claim_on_a_database_that_stops_answering_fails_and_can_be_retried(String database) {
    open(database);
    assertThat(backend.claim(ClaimRequest.of("warm-up", LEASE, token())))
        .isInstanceOf(ClaimResult.Won.class);

    ClaimRequest request = ClaimRequest.of("frozen-" + UUID.randomUUID(), LEASE, token());
    counting.beforeNextExecute(pooled -> proxy.freeze());
    CompletableFuture<ClaimResult> frozen = call(() -> backend.claim(request));

    await().atMost(RETURNS_WITHIN).until(frozen::isDone);
    assertThat(proxy.isFrozen()).as("the freeze happened inside the claim").isTrue();
    assertThatThrownBy(frozen::join)
        .isInstanceOf(CompletionException.class)
        .cause()
        .isInstanceOf(LockBackendException.class)
        .hasMessageStartingWith("claim failed on SQL table '" + table + "'")
        .hasCauseInstanceOf(SQLException.class);

    proxy.resume();
    // The claim may or may not have reached the database: retried with its token, it wins.
    assertThat(backend.claim(request)).isInstanceOf(ClaimResult.Won.class);
    assertThat(backend.claim(ClaimRequest.of("after-" + UUID.randomUUID(), LEASE, token())))
        .isInstanceOf(ClaimResult.Won.class);
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgresql", "mariadb"})
  @DisplayName("a claim waiting on another transaction's row lock is cut by the statement timeout")
  void a_claim_waiting_on_a_row_lock_is_cut_by_the_statement_timeout(String database)
      throws SQLException {
    open(database);
    String key = "locked-" + UUID.randomUUID();
    ClaimRequest request = ClaimRequest.of(key, LEASE, token());
    try (Connection locker = target.shared().getConnection()) {
      locker.setAutoCommit(false);
      // An uncommitted row of the same key: the claim's insert waits for this transaction.
      try (PreparedStatement ps =
          locker.prepareStatement(
              "INSERT INTO "
                  + table
                  + " (lock_key, state, fence, lease_expiry, expires_at)"
                  + " VALUES (?, 'CLAIMED', 1, 0, 0)")) {
        if (backend.dialect().storesKeysAsBytes()) {
          ps.setBytes(1, key.getBytes(StandardCharsets.UTF_8));
        } else {
          ps.setString(1, key);
        }
        ps.executeUpdate();
      }
      CompletableFuture<ClaimResult> waiting = call(() -> backend.claim(request));
      await().atMost(RETURNS_WITHIN).until(waiting::isDone);
      assertThatThrownBy(waiting::join)
          .cause()
          .isInstanceOf(LockBackendException.class)
          .hasMessageStartingWith("claim failed on SQL table '" + table + "'");
      locker.rollback();
    }
    assertThat(backend.claim(request)).isInstanceOf(ClaimResult.Won.class);
  }

  @ParameterizedTest
  @ValueSource(strings = {"postgresql", "mariadb"})
  @DisplayName("transactional mode: DONE on a database that stopped answering fails, rolled back")
  void the_done_write_of_a_transactional_run_is_bounded(String database) {
    open(database);
    String key = "tx-" + UUID.randomUUID();
    ClaimResult won = backend.claim(ClaimRequest.of(key, LEASE, token()));
    assertThat(won).isInstanceOf(ClaimResult.Won.class);
    Claim claim = ((ClaimResult.Won) won).claim();

    CompletableFuture<Object> run =
        call(
            () -> {
              try {
                return backend.runAndComplete(
                    claim,
                    TTL,
                    connection -> {
                      proxy.freeze(); // the work is done; the database stops answering
                      return "work";
                    });
              } catch (Exception e) {
                throw new CompletionException(e);
              }
            });

    await().atMost(RETURNS_WITHIN).until(run::isDone);
    assertThatThrownBy(run::join)
        .cause()
        .isInstanceOf(LockBackendException.class)
        .hasMessageStartingWith(
            "runAndComplete (marking DONE; the work's writes were rolled back)");

    proxy.resume();
    LockRecord record = backend.inspect(key).orElseThrow();
    assertThat(record.state()).as("DONE was not committed").isEqualTo(LockState.CLAIMED);
    assertThat(backend.complete(claim, TTL)).as("the claim can still complete").isTrue();
  }

  private <T> CompletableFuture<T> call(Supplier<T> verb) {
    return CompletableFuture.supplyAsync(verb, caller);
  }

  private static String token() {
    return UUID.randomUUID().toString();
  }
}
