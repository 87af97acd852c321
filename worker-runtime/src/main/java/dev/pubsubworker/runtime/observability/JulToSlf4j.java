package dev.pubsubworker.runtime.observability;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.LoggerContextListener;
import ch.qos.logback.core.spi.ContextAwareBase;
import ch.qos.logback.core.spi.LifeCycle;
import com.google.api.core.InternalApi;
import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * Routes {@code java.util.logging} (used by gRPC and the Google Cloud client libraries) into SLF4J
 * through {@code org.slf4j:jul-to-slf4j}'s {@link SLF4JBridgeHandler}, so that every line the
 * process writes goes through logback and has the configured format: in JSON mode no plain-text
 * line reaches standard error behind Cloud Logging's back.
 *
 * <p>Used from {@code logback.xml} as a context listener, after logback's {@code
 * LevelChangePropagator} (which keeps JUL from building records for levels logback drops):
 *
 * <pre>{@code
 * <contextListener class="dev.pubsubworker.runtime.observability.JulToSlf4j"/>
 * }</pre>
 *
 * On start it replaces the JUL root logger's handlers (the default console handler) with the
 * bridge, which hands each record to the SLF4J logger of the same name: SEVERE as ERROR, WARNING as
 * WARN, INFO and CONFIG as INFO, FINE and FINER as DEBUG, FINEST as TRACE, with the record's
 * parameters formatted and its throwable attached. Survives logback reconfiguration.
 */
@InternalApi("named by the logging configuration")
public final class JulToSlf4j extends ContextAwareBase implements LoggerContextListener, LifeCycle {

  private volatile boolean started;

  /** Creates the listener; logback calls this from {@code logback.xml}. */
  public JulToSlf4j() {}

  @Override
  public synchronized void start() {
    if (started) {
      return;
    }
    SLF4JBridgeHandler.removeHandlersForRootLogger();
    SLF4JBridgeHandler.install();
    started = true;
  }

  @Override
  public void stop() {
    // The bridge stays: JUL output must not fall back to plain text while the process runs.
  }

  @Override
  public boolean isStarted() {
    return started;
  }

  @Override
  public boolean isResetResistant() {
    return true;
  }

  @Override
  public void onStart(LoggerContext context) {}

  @Override
  public void onReset(LoggerContext context) {}

  @Override
  public void onStop(LoggerContext context) {}

  @Override
  public void onLevelChange(ch.qos.logback.classic.Logger logger, Level level) {}
}
