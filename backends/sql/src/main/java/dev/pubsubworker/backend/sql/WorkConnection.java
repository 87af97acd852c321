package dev.pubsubworker.backend.sql;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * The {@link Connection} a transactional-mode work receives: the transaction's own connection, with
 * the calls that would break "the work's writes and DONE commit together" refused.
 *
 * <ul>
 *   <li>{@code commit()}, {@code rollback()} and {@code setAutoCommit(true)} throw {@link
 *       SQLException}: the backend commits after writing DONE, or rolls everything back. Savepoints
 *       ({@code setSavepoint}, {@code rollback(Savepoint)}) work as usual.
 *   <li>{@code close()} does nothing, so try-with-resources in the work is harmless; the backend
 *       returns the connection to its pool when the transaction is over.
 *   <li>After the transaction is over every call throws {@link SQLException}.
 * </ul>
 *
 * Everything else, {@code unwrap} included, goes to the pooled connection.
 */
final class WorkConnection implements InvocationHandler {

  private final Connection target;
  private volatile boolean over;

  private WorkConnection(Connection target) {
    this.target = target;
  }

  /** A guarded view of {@code target} and the handle that ends it. */
  static WorkConnection wrap(Connection target) {
    return new WorkConnection(target);
  }

  /** The proxy handed to the work. */
  Connection proxy() {
    return (Connection)
        Proxy.newProxyInstance(
            WorkConnection.class.getClassLoader(), new Class<?>[] {Connection.class}, this);
  }

  /** Ends the view: later calls on the proxy throw. */
  void end() {
    over = true;
  }

  @Override
  public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
    String name = method.getName();
    int arity = args == null ? 0 : args.length;
    switch (name) {
      case "equals":
        if (arity == 1) {
          return proxy == args[0];
        }
        break;
      case "hashCode":
        if (arity == 0) {
          return System.identityHashCode(proxy);
        }
        break;
      case "toString":
        if (arity == 0) {
          return "transactional-mode connection (" + target + ")";
        }
        break;
      case "close":
        return null;
      case "isClosed":
        return over || target.isClosed();
      default:
        break;
    }
    if (over) {
      throw new SQLException(
          "the transactional-mode work is over; its connection can no longer be used", "08003");
    }
    if ((name.equals("commit") && arity == 0)
        || (name.equals("rollback") && arity == 0)
        || (name.equals("setAutoCommit") && Boolean.TRUE.equals(args[0]))) {
      throw new SQLException(
          name
              + " is not allowed on a transactional-mode connection: the lock backend commits the"
              + " work's writes together with DONE, or rolls both back (savepoints are allowed)",
          "25000");
    }
    if (name.equals("setAutoCommit")) {
      return null;
    }
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}
