package dev.pubsubworker.runtime.observability;

import ch.qos.logback.classic.PatternLayout;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.encoder.EncoderBase;
import com.google.api.core.InternalApi;
import dev.pubsubworker.runtime.config.LogFormat;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

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
 *   <pattern>%d %level %logger %msg%n</pattern>          <!-- text only; default DEFAULT_PATTERN -->
 * </encoder>
 * }</pre>
 *
 * An unknown format is reported as a logback warning and text is used. Output is UTF-8.
 * Thread-safe.
 *
 * <p>Text lines cannot be forged: the layout renders the event with every value that can come from
 * outside the code (message and arguments, MDC values such as keys and message ids, key-value
 * pairs, thread and logger names, exception messages) escaped as {@code \n}, {@code \r}, {@code
 * \t}, {@code \\} or {@code \\uXXXX} (C0/C1 controls, ESC, NUL, DEL, U+2028/2029, bidi overrides),
 * so one event is one line; only an exception's stack trace adds lines, each the JVM's own. The
 * pattern may use {@code %mdcFields}: the dispatcher's MDC fields that are present. JSON lines
 * escape per RFC 8259 ({@link JsonLogLayout}).
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
   * message), message.
   */
  public static final String DEFAULT_PATTERN =
      "%d{HH:mm:ss.SSS} %-5level %logger{20}%mdcFields %msg%n";

  private String pattern = DEFAULT_PATTERN;
  private volatile LogFormat format = LogFormat.TEXT;
  private PatternLayout text;
  private JsonLogLayout json;

  /** Creates the encoder; logback calls this from {@code logback.xml}. */
  public WorkerLogEncoder() {}

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
    this.format = java.util.Objects.requireNonNull(format, "format");
  }

  /** The format in use. */
  public LogFormat getLogFormat() {
    return format;
  }

  /** The text format's logback pattern. */
  public void setPattern(String pattern) {
    this.pattern = pattern;
  }

  @Override
  public void start() {
    text = new PatternLayout();
    text.getInstanceConverterMap().put(MdcFieldsConverter.WORD, MdcFieldsConverter::new);
    text.setContext(getContext());
    text.setPattern(pattern);
    text.start();
    json = new JsonLogLayout();
    json.setContext(getContext());
    json.start();
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
    String line =
        format == LogFormat.JSON ? json.doLayout(event) : text.doLayout(new EscapedEvent(event));
    return line.getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public byte[] footerBytes() {
    return null;
  }
}
