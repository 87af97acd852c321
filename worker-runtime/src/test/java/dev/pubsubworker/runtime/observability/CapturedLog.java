package dev.pubsubworker.runtime.observability;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.LoggerFactory;

/**
 * Every log event of the process, encoded by the worker's own {@link WorkerLogEncoder} in one
 * format ({@code text} or {@code json}), while attached to the root logger; the worker's loggers
 * run at DEBUG meanwhile. {@link #close()} detaches it and restores their level. Public for the
 * tests of other packages that check what the log shows.
 */
public final class CapturedLog extends AppenderBase<ILoggingEvent> implements AutoCloseable {

  /** One encoded event per entry, as the console would have printed it. */
  public final List<String> events = new CopyOnWriteArrayList<>();

  private final WorkerLogEncoder encoder = new WorkerLogEncoder();
  private final Logger workerLogger;
  private final Level oldLevel;

  private CapturedLog(LoggerContext context, String format) {
    setContext(context);
    setName("captured-" + format);
    encoder.setContext(context);
    encoder.setFormat(format);
    encoder.start();
    start();
    workerLogger = context.getLogger("dev.pubsubworker");
    oldLevel = workerLogger.getLevel();
    workerLogger.setLevel(Level.DEBUG);
    context.getLogger(Logger.ROOT_LOGGER_NAME).addAppender(this);
  }

  /** Starts capturing, encoded in {@code format} ({@code text} or {@code json}). */
  public static CapturedLog attach(String format) {
    return new CapturedLog((LoggerContext) LoggerFactory.getILoggerFactory(), format);
  }

  @Override
  protected void append(ILoggingEvent event) {
    events.add(new String(encoder.encode(event), StandardCharsets.UTF_8));
  }

  @Override
  public void close() {
    ((LoggerContext) getContext()).getLogger(Logger.ROOT_LOGGER_NAME).detachAppender(this);
    workerLogger.setLevel(oldLevel);
    stop();
  }
}
