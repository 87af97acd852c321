package dev.pubsubworker.runtime.cli;

import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * SIGTERM and SIGINT handling: the first signal starts a graceful stop, a second one halts at once.
 * Uses the JDK's {@code sun.misc.Signal} (module jdk.unsupported) reflectively; where it is
 * missing, falls back to a shutdown hook (graceful only).
 */
final class Signals {

  private static final Logger log = LoggerFactory.getLogger(Signals.class);

  private Signals() {}

  /**
   * Installs the handlers.
   *
   * @param graceful started on a new thread at the first signal; it should stop and exit
   * @param haltCode the exit code of a second signal
   */
  static void install(Runnable graceful, int haltCode) {
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
      for (String name : new String[] {"TERM", "INT"}) {
        handle.invoke(null, signalClass.getConstructor(String.class).newInstance(name), handler);
      }
    } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
      log.debug("signal API unavailable; using a shutdown hook", e);
      Runtime.getRuntime().addShutdownHook(new Thread(graceful, "graceful-stop"));
    }
  }
}
