package dev.pubsubworker.runtime.observability;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.CoreConstants;
import ch.qos.logback.core.LayoutBase;
import com.google.api.core.InternalApi;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.util.Map;
import java.util.TreeMap;

/**
 * A logback layout that writes each event as one JSON object on one line, in the shape Google Cloud
 * Logging parses from a container's output into a structured entry:
 *
 * <pre>{@code
 * {"time":"2025-05-01T12:00:00.123456Z","severity":"WARNING","message":"key orders:po-7 is in
 * progress elsewhere ...","logger":"dev.pubsubworker.pubsub.Failures",
 * "thread":"handler-orders-1","subscription":"orders","messageId":"1234","deliveryAttempt":2,
 * "key":"orders:po-7","fence":3}
 * }</pre>
 *
 * <ul>
 *   <li>{@code time}: RFC 3339 in UTC, with the event's sub-millisecond digits when it has them.
 *   <li>{@code severity}: TRACE and DEBUG as {@code DEBUG}, {@code INFO}, WARN as {@code WARNING},
 *       {@code ERROR}.
 *   <li>{@code message}: the formatted message; with a throwable, its stack trace follows on the
 *       next lines (Java's own format, causes included), which Error Reporting recognises. ERROR
 *       events with a throwable also carry Error Reporting's {@code @type}.
 *   <li>{@code logger}, {@code thread}.
 *   <li>The dispatcher's MDC fields as top-level fields when present: {@code subscription}, {@code
 *       messageId}, {@code deliveryAttempt} and {@code fence} (as numbers), {@code key} (as the
 *       configured key format rendered it); and, when the delivery carries a trace, {@code
 *       logging.googleapis.com/trace}, {@code logging.googleapis.com/spanId} and {@code
 *       logging.googleapis.com/trace_sampled} (a boolean), which Cloud Logging uses to link the
 *       line to the trace. Any other MDC entry goes into an {@code mdc} object.
 * </ul>
 *
 * Every configured secret is masked in every value ({@link
 * dev.pubsubworker.runtime.config.KnownSecrets}), also in exception messages and stack traces.
 * Strings are escaped per RFC 8259 (quotes, backslashes, every control character) and an unpaired
 * surrogate becomes U+FFFD, so a line is always valid JSON in valid UTF-8 whatever a message
 * contains. The characters the text format escapes (C0 and C1 controls, DEL, U+2028/U+2029, the
 * bidirectional overrides and isolates) are written as {@code \\uXXXX} too, so that a raw line,
 * read in a terminal or by a line-based tool, never carries one; a JSON parser gets them back.
 * Thread-safe.
 */
@InternalApi("named by the logging configuration; part of the runtime's log format, not its API")
public final class JsonLogLayout extends LayoutBase<ILoggingEvent> {

  /** The {@code @type} that marks an entry for Error Reporting. */
  static final String ERROR_REPORTING_TYPE =
      "type.googleapis.com/google.devtools.clouderrorreporting.v1beta1.ReportedErrorEvent";

  private static final char REPLACEMENT = '\ufffd';

  /** Creates the layout; logback calls this from {@code logback.xml}. */
  public JsonLogLayout() {}

  @Override
  public String doLayout(ILoggingEvent raw) {
    // Configured secrets are masked in every value before it is escaped (KnownSecrets).
    ILoggingEvent event = EscapedEvent.masked(raw);
    StringBuilder json = new StringBuilder(256);
    json.append('{');
    field(json, "time", DateTimeFormatter.ISO_INSTANT.format(time(event)));
    json.append(',');
    field(json, "severity", severity(event.getLevel()));
    json.append(',');
    field(json, "message", message(event));
    json.append(',');
    field(json, "logger", event.getLoggerName());
    json.append(',');
    field(json, "thread", event.getThreadName());
    if (event.getLevel() == Level.ERROR && event.getThrowableProxy() != null) {
      json.append(',');
      field(json, "@type", ERROR_REPORTING_TYPE);
    }
    Map<String, String> mdc = event.getMDCPropertyMap();
    if (mdc != null && !mdc.isEmpty()) {
      for (String name : MdcKeys.ALL) {
        String value = mdc.get(name);
        if (value == null || value.isEmpty()) {
          continue;
        }
        json.append(',');
        if (MdcKeys.NUMERIC.contains(name) && isWholeNumber(value)
            || MdcKeys.BOOLEAN.contains(name) && (value.equals("true") || value.equals("false"))) {
          string(json, name);
          json.append(':').append(value);
        } else {
          field(json, name, value);
        }
      }
      Map<String, String> others = new TreeMap<>();
      mdc.forEach(
          (k, v) -> {
            if (!MdcKeys.ALL.contains(k) && v != null) {
              others.put(k, v);
            }
          });
      if (!others.isEmpty()) {
        json.append(',');
        string(json, "mdc");
        json.append(":{");
        boolean first = true;
        for (Map.Entry<String, String> e : others.entrySet()) {
          if (!first) {
            json.append(',');
          }
          first = false;
          field(json, e.getKey(), e.getValue());
        }
        json.append('}');
      }
    }
    json.append('}').append(CoreConstants.LINE_SEPARATOR);
    return json.toString();
  }

  @Override
  public String getContentType() {
    return "application/x-ndjson";
  }

  /** The Cloud Logging severity of a logback level. */
  static String severity(Level level) {
    if (level == null) {
      return "DEFAULT";
    }
    return switch (level.toInt()) {
      case Level.ERROR_INT -> "ERROR";
      case Level.WARN_INT -> "WARNING";
      case Level.INFO_INT -> "INFO";
      case Level.DEBUG_INT, Level.TRACE_INT -> "DEBUG";
      default -> "DEFAULT";
    };
  }

  private static Instant time(ILoggingEvent event) {
    Instant instant = event.getInstant();
    return instant != null ? instant : Instant.ofEpochMilli(event.getTimeStamp());
  }

  private static String message(ILoggingEvent event) {
    String message = event.getFormattedMessage();
    if (message == null) {
      message = "";
    }
    IThrowableProxy thrown = event.getThrowableProxy();
    if (thrown == null) {
      return message;
    }
    String trace = ThrowableProxyUtil.asString(thrown);
    return message.isEmpty() ? trace : message + "\n" + trace;
  }

  private static boolean isWholeNumber(String value) {
    int start = value.charAt(0) == '-' ? 1 : 0;
    if (value.length() == start || value.length() - start > 18) {
      return false;
    }
    if (value.length() - start > 1 && value.charAt(start) == '0') {
      return false; // JSON forbids leading zeros
    }
    for (int i = start; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c < '0' || c > '9') {
        return false;
      }
    }
    return true;
  }

  private static void field(StringBuilder json, String name, String value) {
    string(json, name);
    json.append(':');
    if (value == null) {
      json.append("null");
    } else {
      string(json, value);
    }
  }

  /** Appends {@code s} as a JSON string (RFC 8259 §7). */
  static void string(StringBuilder json, String s) {
    json.append('"');
    int n = s.length();
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> json.append("\\\"");
        case '\\' -> json.append("\\\\");
        case '\n' -> json.append("\\n");
        case '\r' -> json.append("\\r");
        case '\t' -> json.append("\\t");
        case '\b' -> json.append("\\b");
        case '\f' -> json.append("\\f");
        default -> {
          if (ControlCharacters.isControl(c)) {
            // What the text format escapes, so a raw line carries no C1 control or bidi override.
            unicodeEscape(json, c);
          } else if (Character.isHighSurrogate(c)) {
            if (i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
              json.append(c).append(s.charAt(++i));
            } else {
              json.append(REPLACEMENT);
            }
          } else if (Character.isLowSurrogate(c)) {
            json.append(REPLACEMENT);
          } else {
            json.append(c);
          }
        }
      }
    }
    json.append('"');
  }

  private static void unicodeEscape(StringBuilder json, char c) {
    json.append("\\u");
    String hex = Integer.toHexString(c);
    for (int pad = hex.length(); pad < 4; pad++) {
      json.append('0');
    }
    json.append(hex);
  }
}
