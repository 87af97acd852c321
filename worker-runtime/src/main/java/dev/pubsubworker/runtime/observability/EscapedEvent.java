package dev.pubsubworker.runtime.observability;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.LoggerContextVO;
import ch.qos.logback.classic.spi.StackTraceElementProxy;
import dev.pubsubworker.runtime.config.KnownSecrets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.slf4j.Marker;
import org.slf4j.event.KeyValuePair;

/**
 * A view of a logging event in which every value that can come from outside the code — the
 * formatted message and its arguments, MDC values, key-value pairs, the thread and logger names and
 * exception messages — is passed through one function: by default its control characters are
 * escaped ({@link ControlCharacters}), and the layouts also mask the configured secrets in it
 * ({@link #masked}). The text layout renders this view, so one event is one line (plus, for an
 * exception, its stack trace, whose lines are the JVM's own).
 */
final class EscapedEvent implements ILoggingEvent {

  private final ILoggingEvent event;
  private final UnaryOperator<String> escape;
  private final Map<String, String> mdc;

  /** The event with control characters escaped and the configured secrets masked. */
  EscapedEvent(ILoggingEvent event) {
    this(event, s -> ControlCharacters.escape(KnownSecrets.mask(s)));
  }

  /**
   * The event with the configured secrets masked ({@link KnownSecrets#mask}), and nothing else
   * changed: what the JSON layout renders, which escapes by itself.
   */
  static EscapedEvent masked(ILoggingEvent event) {
    return new EscapedEvent(event, KnownSecrets::mask);
  }

  /** The event with {@code escape} applied to every value that can come from outside the code. */
  EscapedEvent(ILoggingEvent event, UnaryOperator<String> escape) {
    this.event = event;
    this.escape = escape;
    Map<String, String> raw = event.getMDCPropertyMap();
    if (raw == null || raw.isEmpty()) {
      this.mdc = raw;
    } else {
      Map<String, String> escaped = new LinkedHashMap<>();
      raw.forEach((k, v) -> escaped.put(escape.apply(k), escape.apply(v)));
      this.mdc = escaped;
    }
  }

  @Override
  public String getThreadName() {
    return escape.apply(event.getThreadName());
  }

  @Override
  public Level getLevel() {
    return event.getLevel();
  }

  @Override
  public String getMessage() {
    return escape.apply(event.getMessage());
  }

  @Override
  public Object[] getArgumentArray() {
    Object[] args = event.getArgumentArray();
    if (args == null) {
      return null;
    }
    Object[] escaped = new Object[args.length];
    for (int i = 0; i < args.length; i++) {
      escaped[i] = args[i] == null ? null : escape.apply(String.valueOf(args[i]));
    }
    return escaped;
  }

  @Override
  public String getFormattedMessage() {
    return escape.apply(event.getFormattedMessage());
  }

  @Override
  public String getLoggerName() {
    return escape.apply(event.getLoggerName());
  }

  @Override
  public LoggerContextVO getLoggerContextVO() {
    return event.getLoggerContextVO();
  }

  @Override
  public IThrowableProxy getThrowableProxy() {
    IThrowableProxy thrown = event.getThrowableProxy();
    return thrown == null ? null : new EscapedThrowable(thrown, escape);
  }

  @Override
  public StackTraceElement[] getCallerData() {
    return event.getCallerData();
  }

  @Override
  public boolean hasCallerData() {
    return event.hasCallerData();
  }

  @Override
  public List<Marker> getMarkerList() {
    return event.getMarkerList();
  }

  @Override
  public Map<String, String> getMDCPropertyMap() {
    return mdc;
  }

  @Override
  @SuppressWarnings("deprecation")
  public Map<String, String> getMdc() {
    return mdc;
  }

  @Override
  public long getTimeStamp() {
    return event.getTimeStamp();
  }

  @Override
  public int getNanoseconds() {
    return event.getNanoseconds();
  }

  @Override
  public Instant getInstant() {
    return event.getInstant();
  }

  @Override
  public long getSequenceNumber() {
    return event.getSequenceNumber();
  }

  @Override
  public List<KeyValuePair> getKeyValuePairs() {
    List<KeyValuePair> pairs = event.getKeyValuePairs();
    if (pairs == null) {
      return null;
    }
    return pairs.stream()
        .map(
            p ->
                new KeyValuePair(
                    escape.apply(p.key),
                    p.value == null ? null : escape.apply(String.valueOf(p.value))))
        .toList();
  }

  @Override
  public void prepareForDeferredProcessing() {
    event.prepareForDeferredProcessing();
  }

  /** An exception whose messages (its own, its causes', its suppressed ones') are escaped. */
  private record EscapedThrowable(IThrowableProxy thrown, UnaryOperator<String> escape)
      implements IThrowableProxy {
    @Override
    public String getMessage() {
      return escape.apply(thrown.getMessage());
    }

    @Override
    public String getClassName() {
      return thrown.getClassName();
    }

    @Override
    public StackTraceElementProxy[] getStackTraceElementProxyArray() {
      return thrown.getStackTraceElementProxyArray();
    }

    @Override
    public int getCommonFrames() {
      return thrown.getCommonFrames();
    }

    @Override
    public IThrowableProxy getCause() {
      IThrowableProxy cause = thrown.getCause();
      return cause == null ? null : new EscapedThrowable(cause, escape);
    }

    @Override
    public IThrowableProxy[] getSuppressed() {
      IThrowableProxy[] suppressed = thrown.getSuppressed();
      if (suppressed == null) {
        return null;
      }
      IThrowableProxy[] escaped = new IThrowableProxy[suppressed.length];
      for (int i = 0; i < suppressed.length; i++) {
        escaped[i] = new EscapedThrowable(suppressed[i], escape);
      }
      return escaped;
    }

    @Override
    public boolean isCyclic() {
      return thrown.isCyclic();
    }
  }
}
