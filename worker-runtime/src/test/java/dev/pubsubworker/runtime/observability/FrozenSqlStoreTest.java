package dev.pubsubworker.runtime.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.pubsubworker.pubsub.Outcome;
import dev.pubsubworker.runtime.config.WorkerConfig;
import dev.pubsubworker.runtime.pubsub.DispatchListener;
import dev.pubsubworker.runtime.testing.WorkerHarness;
import dev.pubsubworker.runtime.worker.Worker;
import dev.pubsubworker.testservices.SqlDatabase;
import dev.pubsubworker.testservices.SubscriptionSpec;
import dev.pubsubworker.testservices.TcpProxy;
import dev.pubsubworker.testservices.TestServices;
import java.net.InetSocketAddress;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A worker on a PostgreSQL or MariaDB lock store that stops answering: the database is reached
 * through a {@link TcpProxy}, frozen while messages arrive. The store's timeouts free the handler
 * threads (their messages are nacked as store-failed, never left hanging), {@code /healthz} fails
 * while store calls are stuck longer than {@code lock-store-stuck-after} and recovers when they
 * return, and after the database answers again every message is processed exactly once.
 *
 * <p>With {@code -Dfrozen-sql-store.default-timeouts=true} the store keeps its default timeouts
 * (reference.conf) and the test prints how long the handlers of the nacked messages were blocked:
 * the figures quoted in {@code worker-runtime/README.md}. {@code -Dfrozen-sql-store.messages=N}
 * publishes N messages while frozen instead of 3 (1 for a lone message, 10 for two per handler
 * thread).
 */
class FrozenSqlStoreTest {

  private static final Duration WAIT = Duration.ofSeconds(90);
  private static final Pattern URL = Pattern.compile("^(jdbc:[a-z]+://)([^/:]+):(\\d+)(/.*)$");
  private static final boolean DEFAULT_TIMEOUTS =
      Boolean.getBoolean("frozen-sql-store.default-timeouts");

  /** Messages published while frozen: 3, or {@code -Dfrozen-sql-store.messages=N} for load. */
  private static final int MESSAGES = Integer.getInteger("frozen-sql-store.messages", 3);

  @ParameterizedTest
  @ValueSource(strings = {"postgresql", "mariadb"})
  void a_frozen_database_frees_the_handlers_fails_liveness_and_loses_nothing(String database)
      throws Exception {
    SqlDatabase db =
        database.equals("postgresql") ? TestServices.postgres() : TestServices.mariadb();
    Matcher m = URL.matcher(db.jdbcUrl());
    assertThat(m.matches()).as("a jdbc:...://host:port/db URL: %s", db.jdbcUrl()).isTrue();
    String locks = TestServices.uniqueName("locks");
    Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
    List<Duration> storeFailedHandlerTimes = new CopyOnWriteArrayList<>();
    List<Outcome> outcomes = new CopyOnWriteArrayList<>();
    DispatchListener recorder =
        new DispatchListener() {
          @Override
          public void settled(String subscription, Outcome outcome, Duration handlerTime) {
            outcomes.add(outcome);
            if (outcome == Outcome.STORE_FAILED) {
              storeFailedHandlerTimes.add(handlerTime);
            }
          }
        };
    try (TcpProxy proxy = TcpProxy.start(m.group(2), Integer.parseInt(m.group(3)));
        WorkerHarness h = new WorkerHarness(SubscriptionSpec.defaults())) {
      String timeouts =
          DEFAULT_TIMEOUTS
              ? ""
              : "statement-timeout = 1s, socket-timeout = 2s, connect-timeout = 1s";
      String settings =
          """
          pubsub-worker.lock-store {
            type = sql
            sql {
              jdbc-url = "%s", user = "%s", password = "%s", table = %s, create-table = true
              %s
            }
          }
          pubsub-worker.observability {
            lock-store-probe-interval = 200ms
            lock-store-stuck-after = 1s
          }
          """
              .formatted(
                  m.group(1) + proxy.hostPort() + m.group(4),
                  db.user(),
                  db.password(),
                  locks,
                  timeouts);
      // A short lease: a claim whose outcome the frozen database left unknown may have landed
      // after all; its key is claimable again once the lease lapses.
      WorkerConfig config = h.config("key = \"attribute:n\"\nlease = 5s", settings);
      try (Observability observability =
          Observability.create(config, new InetSocketAddress("127.0.0.1", 0))) {
        Worker worker =
            h.create(
                config,
                (message, context) ->
                    runs.computeIfAbsent(
                            message.attribute("n").orElseThrow(), k -> new AtomicInteger())
                        .incrementAndGet(),
                observability::guardListeners,
                List.of(observability.dispatchListeners().get(0), recorder));
        observability.start(worker);
        InetSocketAddress server = observability.httpAddress().orElseThrow();
        worker.start();

        h.publish("warm-up", Map.of("n", "0"));
        await().atMost(WAIT).until(() -> runs.containsKey("0"));
        assertThat(Http.get(server, "/healthz").status()).isEqualTo(200);

        proxy.freeze();
        for (int n = 1; n <= MESSAGES; n++) {
          h.publish("order " + n, Map.of("n", String.valueOf(n)));
        }
        await()
            .atMost(WAIT)
            .pollInterval(Duration.ofMillis(50))
            .until(() -> Http.get(server, "/healthz").status() == 503);
        assertThat(Http.get(server, "/healthz").body())
            .contains("stuck in the lock store: a ")
            .contains("(stuck after 1.0s)");
        // The store's timeouts free the handlers: their messages are nacked, not held.
        await().atMost(WAIT).until(() -> !storeFailedHandlerTimes.isEmpty());
        assertThat(runs.keySet()).containsExactly("0");
        assertThat(Http.get(server, "/metrics").body())
            .contains("pubsub_worker_lock_store_oldest_call_age_seconds")
            .contains("pubsub_worker_lock_store_calls_in_progress");
        if (DEFAULT_TIMEOUTS) {
          // One figure per message published while frozen (redeliveries add more).
          await()
              .atMost(WAIT.multipliedBy(1 + MESSAGES / 5))
              .until(() -> storeFailedHandlerTimes.size() >= MESSAGES);
          List<Duration> sorted =
              storeFailedHandlerTimes.subList(0, MESSAGES).stream().sorted().toList();
          System.err.printf(
              "[frozen-sql-store] %s, default timeouts, %d message(s) published while frozen,"
                  + " 5 handler threads: handler times of the first %d store-failed nacks: min"
                  + " %.1fs, median %.1fs, max %.1fs; all: %s%n",
              database,
              MESSAGES,
              MESSAGES,
              sorted.get(0).toMillis() / 1000.0,
              sorted.get(sorted.size() / 2).toMillis() / 1000.0,
              sorted.get(sorted.size() - 1).toMillis() / 1000.0,
              sorted.stream()
                  .map(d -> String.format(java.util.Locale.ROOT, "%.2f", d.toMillis() / 1000.0))
                  .toList());
        }

        proxy.resume();
        await().atMost(WAIT).until(() -> Http.get(server, "/healthz").status() == 200);
        assertThat(Http.get(server, "/healthz").body()).isEqualTo("alive\n");
        await().atMost(WAIT).until(() -> runs.size() == MESSAGES + 1);
        assertThat(runs)
            .allSatisfy((n, count) -> assertThat(count).as("runs of message %s", n).hasValue(1));
        assertThat(outcomes).contains(Outcome.STORE_FAILED);
      }
    } finally {
      try (Connection c = db.dataSource().getConnection();
          Statement s = c.createStatement()) {
        s.execute("DROP TABLE IF EXISTS " + locks);
      } catch (SQLException e) {
        throw new AssertionError("could not drop the test's lock table", e);
      }
    }
  }
}
