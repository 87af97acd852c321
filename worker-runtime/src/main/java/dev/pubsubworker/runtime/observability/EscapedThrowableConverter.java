package dev.pubsubworker.runtime.observability;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.pattern.EnsureExceptionHandling;
import ch.qos.logback.classic.pattern.ExtendedThrowableProxyConverter;
import ch.qos.logback.classic.pattern.RootCauseFirstThrowableProxyConverter;
import ch.qos.logback.classic.pattern.ThrowableProxyConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.core.Context;
import ch.qos.logback.core.pattern.Converter;
import ch.qos.logback.core.pattern.ConverterUtil;
import ch.qos.logback.core.pattern.PostCompileProcessor;
import com.google.api.core.InternalApi;

/**
 * {@code %escEx{depth}}: the event's exception as {@code %ex} writes it (class, message, stack
 * frames, {@code Caused by:} and {@code Suppressed:} sections, each line ending the line), with
 * every exception's message — its own, its causes', its suppressed ones', which often quote a key,
 * an attribute or a store's answer — masked ({@link dev.pubsubworker.runtime.config.KnownSecrets})
 * and escaped ({@link ControlCharacters}). So the lines after an event's own are only the JVM's: a
 * {@code Class: message} line per exception and its {@code \tat ...} frames.
 *
 * <p>Registered by {@code dev/pubsubworker/runtime/logback-worker.xml}. In the worker's own encoder
 * ({@link WorkerLogEncoder}) {@code %ex}, {@code %exception} and {@code %throwable} are this
 * converter, {@code %xEx} and {@code %rEx} escape in the same way, and a pattern without any of
 * them gets this one appended (where logback would append its own {@code %ex}).
 */
@InternalApi("named by the logging configuration; the conversion word is the contract")
public final class EscapedThrowableConverter extends ThrowableProxyConverter {

  /** The conversion word in a pattern. */
  public static final String WORD = "escEx";

  /** Creates the converter; logback calls this for each use of the word in a pattern. */
  public EscapedThrowableConverter() {}

  @Override
  protected String throwableProxyToString(IThrowableProxy thrown) {
    return super.throwableProxyToString(TextLogValues.of(thrown));
  }

  /** {@code %xEx} (frames with their jar and version), escaped. */
  static final class Extended extends ExtendedThrowableProxyConverter {
    @Override
    protected String throwableProxyToString(IThrowableProxy thrown) {
      return super.throwableProxyToString(TextLogValues.of(thrown));
    }
  }

  /** {@code %rEx} (the root cause first), escaped. */
  static final class RootCauseFirst extends RootCauseFirstThrowableProxyConverter {
    @Override
    protected String throwableProxyToString(IThrowableProxy thrown) {
      return super.throwableProxyToString(TextLogValues.of(thrown));
    }
  }

  /**
   * What {@link EnsureExceptionHandling} does for a pattern that writes no exception — append a
   * converter for it — with the escaping converter instead of logback's.
   */
  static final class EnsureEscapedExceptionHandling implements PostCompileProcessor<ILoggingEvent> {
    private final EnsureExceptionHandling logback = new EnsureExceptionHandling();

    @Override
    public void process(Context context, Converter<ILoggingEvent> head) {
      if (head == null || logback.chainHandlesThrowable(head)) {
        return;
      }
      boolean packaging = context instanceof LoggerContext c && c.isPackagingDataEnabled();
      ConverterUtil.findTail(head)
          .setNext(packaging ? new Extended() : new EscapedThrowableConverter());
    }
  }
}
