package dev.pubsubworker.backend.sql;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import javax.sql.DataSource;

/**
 * A {@link DataSource} in front of a real one that counts what reaches the database through it:
 * statements executed (and the query timeouts they ran with), commits, rollbacks, auto-commit
 * switches and connections borrowed. It can also run a one-shot hook (e.g. kill the session, or
 * throw) right before the next statement.
 */
final class CountingDataSource {

  /** A hook run before a statement executes, with the real (pooled) connection. */
  @FunctionalInterface
  interface BeforeExecute {
    void run(Connection pooled) throws SQLException;
  }

  private static final Set<String> EXECUTES =
      Set.of(
          "execute",
          "executeQuery",
          "executeUpdate",
          "executeLargeUpdate",
          "executeBatch",
          "executeLargeBatch");

  private final DataSource target;
  private final AtomicInteger statements = new AtomicInteger();
  private final AtomicInteger commits = new AtomicInteger();
  private final AtomicInteger rollbacks = new AtomicInteger();
  private final AtomicInteger autoCommitSwitches = new AtomicInteger();
  private final AtomicInteger connections = new AtomicInteger();
  private final Set<Integer> queryTimeouts = ConcurrentHashMap.newKeySet();
  private final AtomicReference<BeforeExecute> hook = new AtomicReference<>();
  private final DataSource proxy;

  CountingDataSource(DataSource target) {
    this.target = target;
    this.proxy =
        proxy(
            DataSource.class,
            (p, m, args) -> {
              Object result = invoke(target, m, args);
              if (m.getName().equals("getConnection")) {
                connections.incrementAndGet();
                return proxy(Connection.class, new ConnectionHandler((Connection) result));
              }
              return result;
            });
  }

  /** The counting data source to hand to the backend. */
  DataSource dataSource() {
    return proxy;
  }

  /** Runs {@code h} once, right before the next statement executes. */
  void beforeNextExecute(BeforeExecute h) {
    hook.set(h);
  }

  void reset() {
    statements.set(0);
    commits.set(0);
    rollbacks.set(0);
    autoCommitSwitches.set(0);
    connections.set(0);
    queryTimeouts.clear();
  }

  /** The distinct {@code getQueryTimeout()} values the executed statements had (0: none). */
  Set<Integer> queryTimeouts() {
    return Set.copyOf(queryTimeouts);
  }

  int statements() {
    return statements.get();
  }

  int commits() {
    return commits.get();
  }

  int rollbacks() {
    return rollbacks.get();
  }

  int autoCommitSwitches() {
    return autoCommitSwitches.get();
  }

  int connections() {
    return connections.get();
  }

  private final class ConnectionHandler implements InvocationHandler {
    private final Connection pooled;

    ConnectionHandler(Connection pooled) {
      this.pooled = pooled;
    }

    @Override
    public Object invoke(Object p, Method m, Object[] args) throws Throwable {
      switch (m.getName()) {
        case "commit" -> commits.incrementAndGet();
        case "rollback" -> rollbacks.incrementAndGet();
        case "setAutoCommit" -> {
          if (pooled.getAutoCommit() != (Boolean) args[0]) {
            autoCommitSwitches.incrementAndGet();
          }
        }
        default -> {}
      }
      Object result = CountingDataSource.invoke(pooled, m, args);
      if (result instanceof CallableStatement s) {
        return proxy(CallableStatement.class, new StatementHandler(pooled, s));
      }
      if (result instanceof PreparedStatement s) {
        return proxy(PreparedStatement.class, new StatementHandler(pooled, s));
      }
      if (result instanceof Statement s) {
        return proxy(Statement.class, new StatementHandler(pooled, s));
      }
      return result;
    }
  }

  private final class StatementHandler implements InvocationHandler {
    private final Connection pooled;
    private final Statement statement;

    StatementHandler(Connection pooled, Statement statement) {
      this.pooled = pooled;
      this.statement = statement;
    }

    @Override
    public Object invoke(Object p, Method m, Object[] args) throws Throwable {
      if (EXECUTES.contains(m.getName())) {
        BeforeExecute h = hook.getAndSet(null);
        if (h != null) {
          h.run(pooled);
        }
        statements.incrementAndGet();
        queryTimeouts.add(statement.getQueryTimeout());
      }
      return CountingDataSource.invoke(statement, m, args);
    }
  }

  private static Object invoke(Object target, Method m, Object[] args) throws Throwable {
    try {
      return m.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  private static <T> T proxy(Class<T> type, InvocationHandler handler) {
    return type.cast(
        Proxy.newProxyInstance(
            CountingDataSource.class.getClassLoader(), new Class<?>[] {type}, handler));
  }
}
