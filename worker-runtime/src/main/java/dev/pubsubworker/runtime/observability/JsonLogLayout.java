package dev.pubsubworker.runtime.observability;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.CoreConstants;
import ch.qos.logback.core.LayoutBase;
import com.google.api.core.InternalApi;
import dev.pubsubworker.runtime.config.KnownSecrets;
import dev.pubsubworker.runtime.config.LogSourceLocation;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * A logback layout that writes each event as one JSON object on one line, in the shape Google Cloud
 * Logging parses from a container's output into a structured entry:
 *
 * <pre>{@code
 * {"time":"2025-05-01T12:00:00.123456Z","severity":"WARNING","message":"key orders:po-7 is in
 * progress elsewhere ...","logger":"dev.pubsubworker.pubsub.Failures",
 * "thread":"handler-orders-1","logging.googleapis.com/sourceLocation":{"file":"Failures.java",
 * "line":"189","function":"dev.pubsubworker.pubsub.Failures.inProgress"},"subscription":"orders",
 * "messageId":"1234","deliveryAttempt":2,"key":"orders:po-7","fence":3,
 * "logging.googleapis.com/labels":{"subscription":"orders"}}
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
 *   <li>{@code logging.googleapis.com/sourceLocation}, which Cloud Logging shows as the entry's
 *       source: {@code file} (the JVM's file name), {@code line} (a string, as the API's int64),
 *       {@code function} ({@code class.method}) of the code that wrote the line; on the lines
 *       {@link #setSourceLocation} selects (WARN and ERROR by default), when the JVM knows the
 *       caller. Finding it walks the stack of the thread that logs, once per such line.
 *   <li>The dispatcher's MDC fields as top-level fields when present: {@code subscription}, {@code
 *       messageId}, {@code deliveryAttempt} and {@code fence} (as numbers), {@code key} (as the
 *       configured key format rendered it); and, when the delivery carries a trace, {@code
 *       logging.googleapis.com/trace}, {@code logging.googleapis.com/spanId} and {@code
 *       logging.googleapis.com/trace_sampled} (a boolean), which Cloud Logging uses to link the
 *       line to the trace. Any other MDC entry goes into an {@code mdc} object.
 *   <li>{@code logging.googleapis.com/labels}, which Cloud Logging makes the entry's labels
 *       (indexed, for low-cardinality values): {@code {"subscription": ...}} on a line written
 *       while handling a message. Only the worker's own low-cardinality fields become labels; never
 *       a message id, key, fence, trace, payload or another MDC entry.
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

  /** The field Cloud Logging reads as the entry's source location. */
  static final String SOURCE_LOCATION = "logging.googleapis.com/sourceLocation";

  /** The field Cloud Logging reads as the entry's labels. */
  static final String LABELS = "logging.googleapis.com/labels";

  /** The MDC fields that are also labels: low-cardinality, the worker's own. */
  static final List<String> LABEL_KEYS = List.of(MdcKeys.SUBSCRIPTION);

  private static final char REPLACEMENT = '\ufffd';

  private volatile LogSourceLocation sourceLocation = LogSourceLocation.WARN;

  /** Creates the layout; logback calls this from {@code logback.xml}. */
  public JsonLogLayout() {}

  /** Which lines carry {@code logging.googleapis.com/sourceLocation}; WARN and ERROR unless set. */
  public void setSourceLocation(LogSourceLocation sourceLocation) {
    this.sourceLocation = Objects.requireNonNull(sourceLocation, "sourceLocation");
  }

  /** Which lines carry {@code logging.googleapis.com/sourceLocation}. */
  public LogSourceLocation getSourceLocation() {
    return sourceLocation;
  }

  @Override
  public String doLayout(ILoggingEvent event) {
    // Configured secrets are masked (KnownSecrets) in every value that can come from outside the
    // code, before string() escapes it.
    StringBuilder json = new StringBuilder(256);
    json.append('{');
    field(json, "time", DateTimeFormatter.ISO_INSTANT.format(time(event)));
    json.append(',');
    field(json, "severity", severity(event.getLevel()));
    json.append(',');
    field(json, "message", KnownSecrets.mask(message(event)));
    json.append(',');
    field(json, "logger", KnownSecrets.mask(event.getLoggerName()));
    json.append(',');
    field(json, "thread", KnownSecrets.mask(event.getThreadName()));
    if (wantsSourceLocation(event.getLevel())) {
      sourceLocation(json, event);
    }
    if (event.getLevel() == Level.ERROR && event.getThrowableProxy() != null) {
      json.append(',');
      field(json, "@type", ERROR_REPORTING_TYPE);
    }
    Map<String, String> mdc = event.getMDCPropertyMap();
    if (mdc != null && !mdc.isEmpty()) {
      for (String name : MdcKeys.ALL) {
        String value = KnownSecrets.mask(mdc.get(name));
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
            if (!MdcKeys.ALL.contains(k) && k != null && v != null) {
              others.put(KnownSecrets.mask(k), KnownSecrets.mask(v));
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
      labels(json, mdc);
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

  private boolean wantsSourceLocation(Level level) {
    return switch (sourceLocation) {
      case NONE -> false;
      case WARN -> level != null && level.isGreaterOrEqual(Level.WARN);
      case ALL -> true;
    };
  }

  /**
   * Appends {@code ,"logging.googleapis.com/sourceLocation":{...}} for the frame that called the
   * logger, if the JVM knows it (logback's caller data: the first frame past the logging
   * framework's).
   */
  private static void sourceLocation(StringBuilder json, ILoggingEvent event) {
    StackTraceElement[] callers = event.getCallerData();
    if (callers == null || callers.length == 0 || callers[0] == null) {
      return;
    }
    StackTraceElement caller = callers[0];
    json.append(',');
    string(json, SOURCE_LOCATION);
    json.append(":{");
    if (caller.getFileName() != null) {
      field(json, "file", caller.getFileName());
      json.append(',');
    }
    if (caller.getLineNumber() > 0) {
      field(json, "line", Integer.toString(caller.getLineNumber()));
      json.append(',');
    }
    field(json, "function", caller.getClassName() + "." + caller.getMethodName());
    json.append('}');
  }

  /** Appends {@code ,"logging.googleapis.com/labels":{...}} if any {@link #LABEL_KEYS} is set. */
  private static void labels(StringBuilder json, Map<String, String> mdc) {
    int before = json.length();
    for (String name : LABEL_KEYS) {
      String value = mdc.get(name);
      if (value == null || value.isEmpty()) {
        continue;
      }
      if (json.length() == before) {
        json.append(',');
        string(json, LABELS);
        json.append(":{");
      } else {
        json.append(',');
      }
      field(json, name, KnownSecrets.mask(value));
    }
    if (json.length() != before) {
      json.append('}');
    }
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
