package dev.pubsubworker.runtime.observability;

import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.StackTraceElementProxy;
import dev.pubsubworker.runtime.config.KnownSecrets;

/**
 * What the text format's converters do to every value that can come from outside the code (a
 * message, an MDC value, a thread or logger name, an exception's message): mask the configured
 * secrets ({@link KnownSecrets#mask}), then escape the control characters ({@link
 * ControlCharacters#escape}), so that a value can neither forge a line nor show a secret.
 */
final class TextLogValues {

  private TextLogValues() {}

  /** {@code s} masked and escaped; {@code null} stays {@code null}. */
  static String of(String s) {
    return s == null ? null : ControlCharacters.escape(KnownSecrets.mask(s));
  }

  /**
   * A view of {@code thrown} whose messages (its own, its causes', its suppressed exceptions') are
   * masked and escaped; class names and stack frames are the JVM's own and stay as they are. {@code
   * null} stays {@code null}.
   */
  static IThrowableProxy of(IThrowableProxy thrown) {
    return thrown == null ? null : new EscapedThrowable(thrown);
  }

  private record EscapedThrowable(IThrowableProxy thrown) implements IThrowableProxy {
    @Override
    public String getMessage() {
      return of(thrown.getMessage());
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
      return of(thrown.getCause());
    }

    @Override
    public IThrowableProxy[] getSuppressed() {
      IThrowableProxy[] suppressed = thrown.getSuppressed();
      if (suppressed == null) {
        return null;
      }
      IThrowableProxy[] escaped = new IThrowableProxy[suppressed.length];
      for (int i = 0; i < suppressed.length; i++) {
        escaped[i] = of(suppressed[i]);
      }
      return escaped;
    }

    @Override
    public boolean isCyclic() {
      return thrown.isCyclic();
    }
  }
}
