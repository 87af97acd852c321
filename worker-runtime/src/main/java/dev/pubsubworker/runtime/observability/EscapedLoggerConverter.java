package dev.pubsubworker.runtime.observability;

import ch.qos.logback.classic.pattern.LoggerConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import com.google.api.core.InternalApi;

/**
 * {@code %escLogger{length}}: the logger's name, abbreviated as {@code %logger{length}} does, with
 * every control character escaped ({@link ControlCharacters}) and the configured secrets masked: a
 * logger may be named from data (a plugin's per-tenant logger, a bridged library's). Registered by
 * {@code dev/pubsubworker/runtime/logback-worker.xml}; in the worker's own encoder ({@link
 * WorkerLogEncoder}) {@code %logger}, {@code %lo} and {@code %c} are this converter too.
 */
@InternalApi("named by the logging configuration; the conversion word is the contract")
public final class EscapedLoggerConverter extends LoggerConverter {

  /** The conversion word in a pattern. */
  public static final String WORD = "escLogger";

  /** Creates the converter; logback calls this for each use of the word in a pattern. */
  public EscapedLoggerConverter() {}

  @Override
  protected String getFullyQualifiedName(ILoggingEvent event) {
    return TextLogValues.of(event.getLoggerName());
  }
}
