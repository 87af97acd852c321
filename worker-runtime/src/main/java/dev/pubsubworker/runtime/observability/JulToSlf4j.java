package dev.pubsubworker.runtime.observability;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.LoggerContextListener;
import ch.qos.logback.core.spi.ContextAwareBase;
import ch.qos.logback.core.spi.LifeCycle;
import java.util.logging.Handler;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.logging.SimpleFormatter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Routes {@code java.util.logging} (used by gRPC and the Google Cloud client libraries) into SLF4J,
 * so that every line the process writes goes through logback and has the configured format: in JSON
 * mode no plain-text line reaches standard error behind Cloud Logging's back.
 *
 * <p>Used from {@code logback.xml} as a context listener, after logback's {@code
 * LevelChangePropagator} (which keeps JUL from building records for levels logback drops):
 *
 * <pre>{@code
 * <contextListener class="dev.pubsubworker.runtime.observability.JulToSlf4j"/>
 * }</pre>
 *
 * On start it replaces the JUL root logger's handlers (the default console handler) with one that
 * hands each record to the SLF4J logger of the same name: SEVERE as ERROR, WARNING as WARN, INFO as
 * INFO, CONFIG and FINE as DEBUG, finer as TRACE, with the record's parameters formatted and its
 * throwable attached. Survives logback reconfiguration.
 */
public final class JulToSlf4j extends ContextAwareBase implements LoggerContextListener, LifeCycle {

  private volatile boolean started;

  /** Creates the listener; logback calls this from {@code logback.xml}. */
  public JulToSlf4j() {}

  @Override
  public synchronized void start() {
    if (started) {
      return;
    }
    java.util.logging.Logger root = LogManager.getLogManager().getLogger("");
    for (Handler h : root.getHandlers()) {
      root.removeHandler(h);
    }
    root.addHandler(new ForwardingHandler());
    started = true;
  }

  @Override
  public void stop() {
    // The handler stays: JUL output must not fall back to plain text while the process runs.
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

  /** Hands JUL records to SLF4J. Never throws. */
  static final class ForwardingHandler extends Handler {

    private final SimpleFormatter formatter = new SimpleFormatter();

    @Override
    public void publish(LogRecord record) {
      if (record == null) {
        return;
      }
      try {
        String name = record.getLoggerName() == null ? "jul" : record.getLoggerName();
        Logger logger = LoggerFactory.getLogger(name);
        int level = record.getLevel().intValue();
        String message = formatter.formatMessage(record);
        Throwable thrown = record.getThrown();
        if (level >= java.util.logging.Level.SEVERE.intValue()) {
          logger.error(message, thrown);
        } else if (level >= java.util.logging.Level.WARNING.intValue()) {
          logger.warn(message, thrown);
        } else if (level >= java.util.logging.Level.INFO.intValue()) {
          logger.info(message, thrown);
        } else if (level >= java.util.logging.Level.FINE.intValue()) {
          logger.debug(message, thrown);
        } else {
          logger.trace(message, thrown);
        }
      } catch (RuntimeException e) {
        reportError("forwarding a java.util.logging record failed", e, 0);
      }
    }

    @Override
    public void flush() {}

    @Override
    public void close() {}
  }
}
