package dev.pubsubworker.runtime.cli;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * SIGTERM, SIGINT and SIGHUP handling: the first signal starts a graceful stop, a second one halts
 * at once. (SIGHUP, which a closed terminal or a supervisor sends, would otherwise end the JVM at
 * once with 129.) Uses the JDK's {@code sun.misc.Signal} (module jdk.unsupported) reflectively;
 * where it is missing, falls back to a shutdown hook (graceful only). A signal the process was
 * started ignoring (SIGHUP under {@code nohup}) stays ignored.
 */
final class Signals {

  /** The signals that stop the worker gracefully. */
  static final List<String> GRACEFUL = List.of("TERM", "INT", "HUP");

  private static final Logger log = LoggerFactory.getLogger(Signals.class);

  private Signals() {}

  /**
   * Installs the handlers.
   *
   * @param graceful started on a new thread at the first signal; it should stop and exit
   * @param haltCode the exit code of a second signal
   * @return puts back the handlers there were before (for a command run inside another program)
   */
  static AutoCloseable install(Runnable graceful, int haltCode) {
    AtomicInteger received = new AtomicInteger();
    Runnable onSignal =
        () -> {
          if (received.incrementAndGet() == 1) {
            log.info("signal received: stopping gracefully (send it again to exit at once)");
            Thread t = new Thread(graceful, "graceful-stop");
            t.start();
          } else {
            log.warn("second signal: exiting at once");
            Runtime.getRuntime().halt(haltCode);
          }
        };
    try {
      Class<?> signalClass = Class.forName("sun.misc.Signal");
      Class<?> handlerClass = Class.forName("sun.misc.SignalHandler");
      Object handler =
          Proxy.newProxyInstance(
              Signals.class.getClassLoader(),
              new Class<?>[] {handlerClass},
              (proxy, method, args) -> {
                if (method.getName().equals("handle")) {
                  onSignal.run();
                  return null;
                }
                if (method.getName().equals("toString")) {
                  return "pubsub-worker signal handler";
                }
                if (method.getName().equals("hashCode")) {
                  return System.identityHashCode(proxy);
                }
                if (method.getName().equals("equals")) {
                  return proxy == args[0];
                }
                return null;
              });
      Method handle = signalClass.getMethod("handle", signalClass, handlerClass);
      List<Object[]> previous = new ArrayList<>();
      for (String name : GRACEFUL) {
        Object signal = signalClass.getConstructor(String.class).newInstance(name);
        try {
          previous.add(new Object[] {signal, handle.invoke(null, signal, handler)});
        } catch (InvocationTargetException e) {
          // This signal is taken (by the JVM or an option such as -Xrs): the others still work.
          log.debug("cannot handle SIG{}; it keeps its default", name, e.getCause());
        }
      }
      return () -> {
        for (Object[] p : previous) {
          try {
            handle.invoke(null, p[0], p[1]);
          } catch (ReflectiveOperationException | RuntimeException e) {
            log.debug("cannot put back the handler of {}", p[0], e);
          }
        }
      };
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      log.debug("signal API unavailable; using a shutdown hook", e);
      Thread hook = new Thread(graceful, "graceful-stop");
      Runtime.getRuntime().addShutdownHook(hook);
      return () -> {
        try {
          Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
          // The JVM is exiting: the hook runs or has run.
        }
      };
    }
  }
}
