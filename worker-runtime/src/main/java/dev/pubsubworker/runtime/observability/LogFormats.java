package dev.pubsubworker.runtime.observability;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.OutputStreamAppender;
import com.google.api.core.InternalApi;
import dev.pubsubworker.runtime.config.LogFormat;
import dev.pubsubworker.runtime.config.LogSourceLocation;
import dev.pubsubworker.runtime.config.LoggingConfig;
import java.util.Iterator;
import java.util.function.Consumer;
import org.slf4j.ILoggerFactory;
import org.slf4j.LoggerFactory;

/**
 * Switches the process's log format at run time, after the config is loaded: {@code
 * dev/pubsubworker/runtime/logback-worker.xml} (which an application's {@code logback.xml}
 * includes) picks the format at boot from {@code -Dpubsub-worker.logging.format} or the environment
 * variable {@code PUBSUB_WORKER_LOG_FORMAT} (and the JSON lines' source location from {@code
 * -Dpubsub-worker.logging.source-location} or {@code PUBSUB_WORKER_LOG_SOURCE_LOCATION}), and the
 * {@code run} and {@code redrive} commands then apply {@code pubsub-worker.logging.format} and
 * {@code source-location} from the config (which those same overrides feed).
 */
@InternalApi("the run command's switch of the log format")
public final class LogFormats {

  private static final boolean LOGBACK = logbackPresent();

  private LogFormats() {}

  private static boolean logbackPresent() {
    try {
      Class.forName(
          "ch.qos.logback.classic.LoggerContext", false, LogFormats.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /**
   * Sets the config's format and source location on every {@link WorkerLogEncoder} of the root
   * logger's appenders and of the loggers that have their own appenders.
   *
   * @return how many encoders were switched; 0 if logback is not the SLF4J backend or the logging
   *     config uses no {@link WorkerLogEncoder} (then nothing changes)
   */
  public static int apply(LoggingConfig logging) {
    if (!LOGBACK) {
      return 0; // logback-classic is optional: an application may bind another SLF4J backend
    }
    LogFormat format = logging.format();
    LogSourceLocation sourceLocation = logging.sourceLocation();
    return forEachEncoder(
        encoder -> {
          encoder.setLogFormat(format);
          encoder.setLogSourceLocation(sourceLocation);
        });
  }

  private static int forEachEncoder(Consumer<WorkerLogEncoder> change) {
    ILoggerFactory factory = LoggerFactory.getILoggerFactory();
    if (!(factory instanceof LoggerContext context)) {
      return 0;
    }
    int switched = 0;
    for (Logger logger : context.getLoggerList()) {
      for (Iterator<Appender<ILoggingEvent>> it = logger.iteratorForAppenders(); it.hasNext(); ) {
        if (it.next() instanceof OutputStreamAppender<ILoggingEvent> out
            && out.getEncoder() instanceof WorkerLogEncoder encoder) {
          change.accept(encoder);
          switched++;
        }
      }
    }
    return switched;
  }
}
