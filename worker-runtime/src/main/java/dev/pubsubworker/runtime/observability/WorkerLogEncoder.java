package dev.pubsubworker.runtime.observability;

import ch.qos.logback.classic.PatternLayout;
import ch.qos.logback.classic.pattern.KeyValuePairConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.encoder.EncoderBase;
import com.google.api.core.InternalApi;
import dev.pubsubworker.runtime.config.LogFormat;
import dev.pubsubworker.runtime.config.LogSourceLocation;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Objects;

/**
 * The worker's log encoder: plain text for people, or one JSON object per line for Google Cloud
 * Logging ({@link JsonLogLayout}), switchable while running ({@link #setLogFormat}, used by {@link
 * LogFormats#apply}).
 *
 * <p>In {@code logback.xml}:
 *
 * <pre>{@code
 * <encoder class="dev.pubsubworker.runtime.observability.WorkerLogEncoder">
 *   <format>${PUBSUB_WORKER_LOG_FORMAT:-text}</format>   <!-- text | json; default text -->
 *   <sourceLocation>warn</sourceLocation>                <!-- json: none | warn | all -->
 *   <pattern>%d %level %escLogger %escMsg%n</pattern>     <!-- text only; default DEFAULT_PATTERN -->
 * </encoder>
 * }</pre>
 *
 * An unknown format or source location is reported as a logback warning and the default is used.
 * Output is UTF-8. Thread-safe.
 *
 * <p>Text lines cannot be forged: the text pattern's converters mask the configured secrets and
 * escape every value that can come from outside the code as {@code \n}, {@code \r}, {@code \t},
 * {@code \\} or {@code \\uXXXX} (C0/C1 controls, ESC, NUL, DEL, U+2028/2029, bidi overrides), so
 * one event is one line; only an exception's stack trace adds lines, each the JVM's own. The
 * escaping conversion words are {@code %escMsg} ({@link EscapedMessageConverter}), {@code %escMdc}
 * ({@link EscapedMdcConverter}), {@code %escLogger} ({@link EscapedLoggerConverter}), {@code
 * %escThread} ({@link EscapedThreadConverter}), {@code %escEx} ({@link EscapedThrowableConverter})
 * and {@code %mdcFields} ({@link MdcFieldsConverter}: the dispatcher's MDC fields that are
 * present). In this encoder's pattern logback's own words for the same values ({@code %msg}, {@code
 * %X}, {@code %logger}, {@code %thread}, {@code %ex}, {@code %xEx}, {@code %rEx}, {@code %kvp} and
 * their aliases) escape in the same way, and a pattern that writes no exception gets {@code %escEx}
 * appended, so a custom pattern cannot leave a value unescaped. JSON lines escape per RFC 8259
 * ({@link JsonLogLayout}).
 *
 * <p>In both formats every configured secret (a store password, the password in a store URL, …) is
 * masked as {@code ***} in every value, the lines of libraries included ({@link
 * dev.pubsubworker.runtime.config.KnownSecrets}).
 */
@InternalApi("named by the logging configuration; part of the runtime's log format, not its API")
public final class WorkerLogEncoder extends EncoderBase<ILoggingEvent> {

  /**
   * The text pattern unless one is configured: time, level, logger, the MDC fields that are present
   * ({@code %mdcFields}: {@code " [orders 1234 attempt=2 key=po-7 fence=3]"}, nothing outside a
   * message), message, exception; every value from outside the code masked and escaped.
   */
  public static final String DEFAULT_PATTERN =
      "%d{HH:mm:ss.SSS} %-5level %escLogger{20}%mdcFields %escMsg%n%escEx";

  private String pattern = DEFAULT_PATTERN;
  private volatile LogFormat format = LogFormat.TEXT;
  private volatile LogSourceLocation sourceLocation = LogSourceLocation.WARN;
  private PatternLayout text;
  private JsonLogLayout json;

  /** Creates the encoder; logback calls this from {@code logback.xml}. */
  public WorkerLogEncoder() {}

  /**
   * Resolves, in {@code layout}'s pattern, the escaping words and logback's own words for the same
   * values to the escaping converters, and appends {@code %escEx} to a pattern without an exception
   * word.
   */
  static void escapeEverything(PatternLayout layout) {
    var words = layout.getInstanceConverterMap();
    words.put(MdcFieldsConverter.WORD, MdcFieldsConverter::new);
    for (String w : new String[] {EscapedMessageConverter.WORD, "m", "msg", "message"}) {
      words.put(w, EscapedMessageConverter::new);
    }
    for (String w : new String[] {EscapedMdcConverter.WORD, "X", "mdc"}) {
      words.put(w, EscapedMdcConverter::new);
    }
    for (String w : new String[] {EscapedLoggerConverter.WORD, "c", "lo", "logger"}) {
      words.put(w, EscapedLoggerConverter::new);
    }
    for (String w : new String[] {EscapedThreadConverter.WORD, "t", "thread"}) {
      words.put(w, EscapedThreadConverter::new);
    }
    for (String w : new String[] {EscapedThrowableConverter.WORD, "ex", "exception", "throwable"}) {
      words.put(w, EscapedThrowableConverter::new);
    }
    for (String w : new String[] {"xEx", "xException", "xThrowable"}) {
      words.put(w, EscapedThrowableConverter.Extended::new);
    }
    for (String w : new String[] {"rEx", "rootException"}) {
      words.put(w, EscapedThrowableConverter.RootCauseFirst::new);
    }
    words.put(
        "kvp",
        () ->
            new KeyValuePairConverter() {
              @Override
              public String convert(ILoggingEvent event) {
                return TextLogValues.of(super.convert(event));
              }
            });
    layout.setPostCompileProcessor(new EscapedThrowableConverter.EnsureEscapedExceptionHandling());
  }

  /** {@code text} or {@code json}, any case; anything else is reported and text is used. */
  public void setFormat(String name) {
    String n = name == null ? "" : name.trim().toUpperCase(Locale.ROOT);
    try {
      format = LogFormat.valueOf(n);
    } catch (IllegalArgumentException e) {
      addWarn("unknown log format '" + name + "' (text | json); using text");
      format = LogFormat.TEXT;
    }
  }

  /** Switches the format; lines already written are unchanged. */
  public void setLogFormat(LogFormat format) {
    this.format = Objects.requireNonNull(format, "format");
  }

  /** The format in use. */
  public LogFormat getLogFormat() {
    return format;
  }

  /**
   * Which JSON lines carry their source location: {@code none}, {@code warn} (WARN and ERROR) or
   * {@code all}, any case; anything else is reported and {@code warn} is used.
   */
  public void setSourceLocation(String name) {
    String n = name == null ? "" : name.trim().toUpperCase(Locale.ROOT);
    try {
      setLogSourceLocation(LogSourceLocation.valueOf(n));
    } catch (IllegalArgumentException e) {
      addWarn("unknown log source location '" + name + "' (none | warn | all); using warn");
      setLogSourceLocation(LogSourceLocation.WARN);
    }
  }

  /** Switches which JSON lines carry their source location, from the next line on. */
  public void setLogSourceLocation(LogSourceLocation sourceLocation) {
    this.sourceLocation = Objects.requireNonNull(sourceLocation, "sourceLocation");
    JsonLogLayout layout = json;
    if (layout != null) {
      layout.setSourceLocation(sourceLocation);
    }
  }

  /** Which JSON lines carry their source location. */
  public LogSourceLocation getLogSourceLocation() {
    return sourceLocation;
  }

  /** The text format's logback pattern. */
  public void setPattern(String pattern) {
    this.pattern = pattern;
  }

  @Override
  public void start() {
    text = new PatternLayout();
    escapeEverything(text);
    text.setContext(getContext());
    text.setPattern(pattern);
    text.start();
    JsonLogLayout layout = new JsonLogLayout();
    layout.setContext(getContext());
    layout.setSourceLocation(sourceLocation);
    layout.start();
    json = layout;
    super.start();
  }

  @Override
  public void stop() {
    if (text != null) {
      text.stop();
    }
    if (json != null) {
      json.stop();
    }
    super.stop();
  }

  @Override
  public byte[] headerBytes() {
    return null;
  }

  @Override
  public byte[] encode(ILoggingEvent event) {
    String line = format == LogFormat.JSON ? json.doLayout(event) : text.doLayout(event);
    return line.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public byte[] footerBytes() {
    return null;
  }
}
