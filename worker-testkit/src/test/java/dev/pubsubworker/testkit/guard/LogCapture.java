package dev.pubsubworker.testkit.guard;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import org.slf4j.LoggerFactory;

/** Captures what one logger (and its children) writes, for asserting on log lines. */
final class LogCapture implements AutoCloseable {
  private final Logger logger;
  private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

  LogCapture(Class<?> source) {
    this(source.getName());
  }

  /** Captures logger {@code name} and its children (a package name: all its classes). */
  LogCapture(String name) {
    logger = (Logger) LoggerFactory.getLogger(name);
    appender.start();
    logger.addAppender(appender);
  }

  List<ILoggingEvent> events(Level level) {
    return appender.list.stream().filter(e -> e.getLevel() == level).toList();
  }

  boolean has(Level level, String fragment) {
    return events(level).stream().anyMatch(e -> e.getFormattedMessage().contains(fragment));
  }

  @Override
  public void close() {
    logger.detachAppender(appender);
  }
}
