package dev.pubsubworker.runtime.observability;

import ch.qos.logback.classic.pattern.ClassicConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import com.google.api.core.InternalApi;
import java.util.Map;

/**
 * {@code %mdcFields}: the dispatcher's MDC fields that are present, as {@code " [orders 1234
 * attempt=2 key=po-7 fence=3]"} (subscription and message id bare, the others named), or nothing at
 * all on a line written outside a message. Each value is masked and escaped ({@link
 * TextLogValues}): a key or a message id cannot end the line. The trace fields are left to the JSON
 * format, where Cloud Logging reads them. Registered by {@code
 * dev/pubsubworker/runtime/logback-worker.xml} and by the worker's own encoder ({@link
 * WorkerLogEncoder}).
 */
@InternalApi("named by the logging configuration; the conversion word is the contract")
public final class MdcFieldsConverter extends ClassicConverter {

  /** The conversion word in a pattern. */
  public static final String WORD = "mdcFields";

  /** Creates the converter; logback calls this for each use of the word in a pattern. */
  public MdcFieldsConverter() {}

  @Override
  public String convert(ILoggingEvent event) {
    Map<String, String> mdc = event.getMDCPropertyMap();
    if (mdc == null || mdc.isEmpty()) {
      return "";
    }
    StringBuilder fields = new StringBuilder();
    for (String name : MdcKeys.ALL) {
      String value = mdc.get(name);
      if (value == null || value.isEmpty() || MdcKeys.CLOUD_LOGGING.contains(name)) {
        continue;
      }
      fields.append(fields.length() == 0 ? " [" : " ");
      switch (name) {
        case MdcKeys.SUBSCRIPTION, MdcKeys.MESSAGE_ID -> {}
        case MdcKeys.DELIVERY_ATTEMPT -> fields.append("attempt=");
        default -> fields.append(name).append('=');
      }
      fields.append(TextLogValues.of(value));
    }
    return fields.length() == 0 ? "" : fields.append(']').toString();
  }
}
