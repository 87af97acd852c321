package dev.pubsubworker.bench;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.Statement;
import java.util.Set;
import java.util.concurrent.atomic.LongAdder;
import javax.sql.DataSource;

/**
 * A {@link DataSource} wrapper that counts, on the client side, the JDBC calls that each cost a
 * round trip to the database: statement executions (a batch counts once), commits and rollbacks.
 * Everything else is passed through. Thread-safe.
 */
final class CountingDataSource {

  private static final Set<String> EXECUTES =
      Set.of(
          "execute",
          "executeQuery",
          "executeUpdate",
          "executeLargeUpdate",
          "executeBatch",
          "executeLargeBatch");

  final LongAdder executes = new LongAdder();
  final LongAdder commits = new LongAdder();
  final LongAdder rollbacks = new LongAdder();
  private final DataSource proxy;

  CountingDataSource(DataSource target) {
    this.proxy = wrap(DataSource.class, target);
  }

  /** The counting data source. */
  DataSource dataSource() {
    return proxy;
  }

  void reset() {
    executes.reset();
    commits.reset();
    rollbacks.reset();
  }

  private <T> T wrap(Class<T> type, T target) {
    InvocationHandler handler =
        (Object self, Method method, Object[] args) -> {
          String name = method.getName();
          if (EXECUTES.contains(name)
              && Statement.class.isAssignableFrom(method.getDeclaringClass())) {
            executes.increment();
          } else if (name.equals("commit") && type == Connection.class) {
            commits.increment();
          } else if (name.equals("rollback") && type == Connection.class) {
            rollbacks.increment();
          }
          Object result;
          try {
            result = method.invoke(target, args);
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
          if (result instanceof Connection c && type == DataSource.class) {
            return wrap(Connection.class, c);
          }
          if (type == Connection.class) {
            if (result instanceof CallableStatement s) {
              return wrap(CallableStatement.class, s);
            }
            if (result instanceof PreparedStatement s) {
              return wrap(PreparedStatement.class, s);
            }
            if (result instanceof Statement s) {
              return wrap(Statement.class, s);
            }
          }
          return result;
        };
    return type.cast(
        Proxy.newProxyInstance(
            CountingDataSource.class.getClassLoader(), new Class<?>[] {type}, handler));
  }
}
