package dev.pubsubworker.runtime.observability;

import ch.qos.logback.classic.pattern.MessageConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import com.google.api.core.InternalApi;

/**
 * {@code %escMsg}: the formatted message, as {@code %msg} writes it, with the configured secrets
 * masked and every control character escaped ({@code \n}, {@code \r}, {@code \t}, {@code \\},
 * {@code \\uXXXX}: see {@link ControlCharacters}), so that a message carrying a key, an attribute
 * or a message id is one line. Registered by {@code dev/pubsubworker/runtime/logback-worker.xml};
 * in the worker's own encoder ({@link WorkerLogEncoder}) {@code %msg}, {@code %m} and {@code
 * %message} are this converter too.
 */
@InternalApi("named by the logging configuration; the conversion word is the contract")
public final class EscapedMessageConverter extends MessageConverter {

  /** The conversion word in a pattern. */
  public static final String WORD = "escMsg";

  /** Creates the converter; logback calls this for each use of the word in a pattern. */
  public EscapedMessageConverter() {}

  @Override
  public String convert(ILoggingEvent event) {
    return TextLogValues.of(super.convert(event));
  }
}
