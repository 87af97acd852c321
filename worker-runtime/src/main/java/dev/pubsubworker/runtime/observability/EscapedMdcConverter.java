package dev.pubsubworker.runtime.observability;

import ch.qos.logback.classic.pattern.MDCConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import com.google.api.core.InternalApi;

/**
 * {@code %escMdc{key:-default}}: an MDC value (or, without a key, every entry as {@code k1=v1,
 * k2=v2}), as {@code %X} writes it, with the configured secrets masked and every control character
 * escaped ({@link ControlCharacters}). Registered by {@code
 * dev/pubsubworker/runtime/logback-worker.xml}; in the worker's own encoder ({@link
 * WorkerLogEncoder}) {@code %X} and {@code %mdc} are this converter too.
 */
@InternalApi("named by the logging configuration; the conversion word is the contract")
public final class EscapedMdcConverter extends MDCConverter {

  /** The conversion word in a pattern. */
  public static final String WORD = "escMdc";

  /** Creates the converter; logback calls this for each use of the word in a pattern. */
  public EscapedMdcConverter() {}

  @Override
  public String convert(ILoggingEvent event) {
    return TextLogValues.of(super.convert(event));
  }
}
