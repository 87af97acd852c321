package dev.pubsubworker.runtime.observability;

import ch.qos.logback.classic.pattern.ThreadConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import com.google.api.core.InternalApi;

/**
 * {@code %escThread}: the thread's name, as {@code %thread} writes it, with every control character
 * escaped ({@link ControlCharacters}) and the configured secrets masked: a thread may be named from
 * data (a plugin's executor named after a subscription or a tenant). Registered by {@code
 * dev/pubsubworker/runtime/logback-worker.xml}; in the worker's own encoder ({@link
 * WorkerLogEncoder}) {@code %thread} and {@code %t} are this converter too.
 */
@InternalApi("named by the logging configuration; the conversion word is the contract")
public final class EscapedThreadConverter extends ThreadConverter {

  /** The conversion word in a pattern. */
  public static final String WORD = "escThread";

  /** Creates the converter; logback calls this for each use of the word in a pattern. */
  public EscapedThreadConverter() {}

  @Override
  public String convert(ILoggingEvent event) {
    return TextLogValues.of(super.convert(event));
  }
}
