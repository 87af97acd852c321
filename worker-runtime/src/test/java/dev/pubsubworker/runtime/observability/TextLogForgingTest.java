package dev.pubsubworker.runtime.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.PatternLayout;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.classic.spi.LoggingEvent;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.runtime.testing.WorkerHarness;
import dev.pubsubworker.testservices.SubscriptionSpec;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.LoggerFactory;

/**
 * Log forging through the real text encoder and the shipped conversion rules: keys, attributes,
 * message text, thread and logger names and exception messages carrying CR, LF, ANSI escapes, NUL
 * and other controls are written as visible escapes, one event per line (plus the JVM's stack trace
 * lines), and lines outside a message carry no empty MDC placeholders. Each check also renders the
 * same event with logback's own, unescaped converters and sees it forge a line, so that it tests
 * the escaping and not its input.
 */
class TextLogForgingTest {

  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final String FORGED_LINE = "12:00:00.000 INFO  forged [audit] admin logged in";
  private static final String HOSTILE =
      "po-1\r\n" + FORGED_LINE + "\u001b[31mRED\u001b[0m\u0000nul\u0085nel\u2028ls\ttab";
  private static final String WORKER_LOGGING = "dev/pubsubworker/runtime/logback-worker.xml";

  /** A stack trace line: the JVM's own, never a value's. */
  private static final String TRACE_LINE =
      "\t*(at |\\.\\.\\. |Caused by: |Wrapped by: |Suppressed: ).*|java\\..*";

  @Test
  void control_characters_in_values_become_visible_escapes() {
    assertThat(ControlCharacters.escape("a\nb\rc\td\\e")).isEqualTo("a\\nb\\rc\\td\\\\e");
    assertThat(ControlCharacters.escape("\u001b[31m\u0000\u007f\u0085\u009b"))
        .isEqualTo("\\u001b[31m\\u0000\\u007f\\u0085\\u009b");
    assertThat(ControlCharacters.escape("\u2028\u2029\u202eevil\u2066"))
        .isEqualTo("\\u2028\\u2029\\u202eevil\\u2066");
    // A surrogate pair (an emoji) is kept; a lone surrogate is escaped.
    assertThat(ControlCharacters.escape("ok \uD83D\uDE00")).isEqualTo("ok \uD83D\uDE00");
    assertThat(ControlCharacters.escape("x\uD83Dy\uDE00")).isEqualTo("x\\ud83dy\\ude00");
    assertThat(ControlCharacters.escape("plain text: café")).isEqualTo("plain text: café");
    assertThat(ControlCharacters.escape(null)).isNull();
  }

  @Test
  void one_event_is_one_line_whatever_its_mdc_arguments_and_exception_message_hold() {
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    WorkerLogEncoder encoder = new WorkerLogEncoder();
    encoder.setContext(context);
    encoder.setFormat("text");
    encoder.start();
    Logger logger = context.getLogger("forging");
    LoggingEvent event =
        new LoggingEvent(
            Logger.class.getName(),
            logger,
            Level.WARN,
            "message {} has attribute {}",
            null,
            new Object[] {HOSTILE, Map.of("ref", HOSTILE)});
    event.setMDCPropertyMap(
        Map.of(
            "subscription", "orders",
            "messageId", HOSTILE,
            "deliveryAttempt", "2",
            "key", HOSTILE,
            "fence", "7"));
    String line = new String(encoder.encode(event), StandardCharsets.UTF_8);
    assertOneSafeLine(line);
    assertForged(unescaped("%msg %X{key}%n", event));
    assertThat(line)
        .contains(" [orders po-1\\r\\n12:00:00.000 INFO  forged")
        .contains(" attempt=2 key=po-1\\r\\n")
        .contains(" fence=7] message po-1\\r\\n")
        .contains("\\u001b[31mRED\\u001b[0m\\u0000nul\\u0085nel\\u2028ls\\ttab");

    LoggingEvent thrown =
        new LoggingEvent(
            Logger.class.getName(),
            logger,
            Level.ERROR,
            "handler failed",
            new IllegalStateException("bad ref " + HOSTILE),
            null);
    String trace = new String(encoder.encode(thrown), StandardCharsets.UTF_8);
    List<String> lines = trace.lines().toList();
    assertThat(lines.get(0)).endsWith(" ERROR forging handler failed");
    assertThat(lines.get(1))
        .startsWith("java.lang.IllegalStateException: bad ref po-1\\r\\n12:00:00.000");
    assertThat(lines.subList(2, lines.size())).allMatch(l -> l.startsWith("\tat "));
    assertThat(trace).doesNotContain("\u001b").doesNotContain("\u0000").doesNotContain("\r");
    assertForged(unescaped(logbacksOwn(WorkerLogEncoder.DEFAULT_PATTERN), thrown));

    LoggingEvent outside =
        new LoggingEvent(Logger.class.getName(), logger, Level.INFO, "started", null, null);
    String plain = new String(encoder.encode(outside), StandardCharsets.UTF_8);
    assertThat(plain).endsWith(" INFO  forging started" + System.lineSeparator());
    assertThat(plain).doesNotContain("attempt=").doesNotContain("key=").doesNotContain("[");
    encoder.stop();
  }

  @Test
  void a_hostile_key_attribute_on_a_real_run_cannot_forge_text_lines() {
    AtomicInteger calls = new AtomicInteger();
    org.slf4j.Logger handlerLog = LoggerFactory.getLogger("forging.handler");
    MessageHandler handler =
        (message, ctx) -> {
          handlerLog.info("handling attributes {}", message.attributes());
          if (calls.incrementAndGet() == 1) {
            throw new IllegalStateException("no such order: " + message.attribute("ref"));
          }
        };
    List<String> events;
    try (CapturedLog captured = CapturedLog.attach("text");
        WorkerHarness h = new WorkerHarness(SubscriptionSpec.defaults())) {
      h.create("key = \"attribute:ref\"", "", handler, List.of()).start();
      h.publish("order", Map.of("ref", HOSTILE, "note", HOSTILE));
      // Fails once, is redelivered, runs; a republish is then a duplicate (DEBUG, with its key).
      await().atMost(WAIT).until(() -> calls.get() == 2);
      h.publish("order", Map.of("ref", HOSTILE));
      await()
          .atMost(WAIT)
          .until(() -> captured.events.stream().anyMatch(l -> l.contains("duplicate of key")));
      events = new ArrayList<>(captured.events);
    }
    assertThat(events).anySatisfy(e -> assertThat(e).contains("handler test failed"));
    assertThat(events).anySatisfy(e -> assertThat(e).contains("handling attributes"));
    for (String event : events) {
      List<String> lines = event.lines().toList();
      // The event's own line, then (for an exception) only stack trace lines.
      assertThat(lines.subList(1, lines.size()))
          .allSatisfy(l -> assertThat(l).matches("(\tat |\t\\.\\.\\. |Caused by: |java\\.).*"));
      assertThat(event)
          .doesNotContain("\u001b")
          .doesNotContain("\u0000")
          .doesNotContain("\r")
          .doesNotContain("\u2028")
          .doesNotContain("\n" + FORGED_LINE);
    }
    assertThat(events)
        .filteredOn(e -> e.contains("duplicate of key"))
        .allSatisfy(e -> assertThat(e).contains("key=test:po-1\\r\\n12:00:00.000 INFO  forged"));
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(
      strings = {
        "%thread|%logger|%X{key}|%X|%kvp|%msg%n", // no exception word: the escaping one is added
        "%t %c{0} %lo %mdc{key} %m%n%ex",
        "%message%n%throwable{full}",
        "%msg%n%xEx",
        "%msg%n%rEx",
        "%replace(%msg){'audit', 'AUDIT'}%n%exception",
        "%escThread %escLogger{0}%mdcFields %escMdc{key} %escMsg%n%escEx"
      })
  void a_custom_pattern_in_the_worker_encoder_escapes_every_value_from_outside_the_code(
      String pattern) {
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    WorkerLogEncoder encoder = new WorkerLogEncoder();
    encoder.setContext(context);
    encoder.setFormat("text");
    encoder.setPattern(pattern);
    encoder.start();
    try {
      LoggingEvent event = hostileEvent(context);
      assertSafeEvent(new String(encoder.encode(event), StandardCharsets.UTF_8));
      assertForged(unescaped(logbacksOwn(pattern), event));
    } finally {
      encoder.stop();
    }
  }

  @Test
  void the_shipped_conversion_rules_escape_in_an_application_s_own_encoder() throws Exception {
    LoggerContext context = new LoggerContext();
    context.setMDCAdapter(org.slf4j.MDC.getMDCAdapter());
    try {
      JoranConfigurator configurator = new JoranConfigurator();
      configurator.setContext(context);
      configurator.doConfigure(
          new ByteArrayInputStream(
              ("<configuration><include resource=\"" + WORKER_LOGGING + "\"/></configuration>")
                  .getBytes(StandardCharsets.UTF_8)));
      // What an application's own appender (a file, say) declares after the include.
      String escaped = "%escThread %escLogger{0}%mdcFields %escMdc{key} %escMdc %escMsg%n%escEx";
      String line = encode(context, escaped, hostileEvent(context));
      assertSafeEvent(line);
      assertThat(line.lines().findFirst().orElseThrow())
          .contains(" [orders po-1\\r\\n12:00:00.000 INFO  forged")
          .contains(" message po-1\\r\\n12:00:00.000 INFO  forged [audit] admin logged in");
      // In such an encoder logback's own words stay logback's: they forge.
      assertForged(encode(context, "%thread %logger %X{key} %msg%n%ex", hostileEvent(context)));
    } finally {
      context.stop();
    }
  }

  /** An ERROR whose every value from outside the code is {@link #HOSTILE}. */
  private static LoggingEvent hostileEvent(LoggerContext context) {
    IllegalStateException failure =
        new IllegalStateException("bad ref " + HOSTILE, new IOException("cause " + HOSTILE));
    failure.addSuppressed(new IllegalArgumentException("suppressed " + HOSTILE));
    LoggingEvent event =
        new LoggingEvent(
            Logger.class.getName(),
            context.getLogger("forging"),
            Level.ERROR,
            "message {} failed",
            failure,
            new Object[] {HOSTILE});
    event.setThreadName("handler-" + HOSTILE);
    event.setLoggerName("forging." + HOSTILE);
    event.setMDCPropertyMap(Map.of("subscription", "orders", "messageId", HOSTILE, "key", HOSTILE));
    event.addKeyValuePair(new org.slf4j.event.KeyValuePair("ref", HOSTILE));
    return event;
  }

  private static String encode(LoggerContext context, String pattern, LoggingEvent event) {
    PatternLayoutEncoder encoder = new PatternLayoutEncoder();
    encoder.setContext(context);
    encoder.setPattern(pattern);
    encoder.start();
    try {
      return new String(encoder.encode(event), StandardCharsets.UTF_8);
    } finally {
      encoder.stop();
    }
  }

  /** {@code event} through logback's own converters, which escape nothing. */
  private static String unescaped(String pattern, LoggingEvent event) {
    PatternLayout layout = new PatternLayout();
    layout.setContext(new LoggerContext());
    layout.setPattern(pattern);
    layout.start();
    return layout.doLayout(event);
  }

  /** {@code pattern} with logback's own word for each escaping one. */
  private static String logbacksOwn(String pattern) {
    return pattern
        .replace("%escThread", "%thread")
        .replace("%escLogger", "%logger")
        .replace("%escMdc", "%X")
        .replace("%escMsg", "%msg")
        .replace("%escEx", "%ex")
        .replace("%mdcFields", " [%X{messageId}]");
  }

  /** What {@link #HOSTILE} does to output that does not escape it: a line of its own. */
  private static void assertForged(String output) {
    assertThat(output.lines())
        .as("a forged line in %s", output)
        .anyMatch(l -> l.startsWith("12:00:00.000 INFO  forged [a"));
  }

  /**
   * The event's own line, then only the JVM's stack trace lines, with every hostile value escaped
   * and none of its characters raw.
   */
  private static void assertSafeEvent(String event) {
    List<String> lines = event.lines().toList();
    assertThat(lines.get(0)).contains("po-1\\r\\n12:00:00.000 INFO  forged");
    assertThat(lines.subList(1, lines.size())).allSatisfy(l -> assertThat(l).matches(TRACE_LINE));
    if (lines.size() > 1) {
      assertThat(event)
          .contains("IllegalStateException: bad ref po-1\\r\\n12:00:00.000 INFO  forged")
          .contains("IOException: cause po-1\\r\\n12:00:00.000 INFO  forged")
          .contains("Suppressed: java.lang.IllegalArgumentException: suppressed po-1\\r\\n");
    }
    assertThat(event)
        .doesNotContain("\r")
        .doesNotContain("\u001b")
        .doesNotContain("\u0000")
        .doesNotContain("\u0085")
        .doesNotContain("\u2028");
  }

  private static void assertOneSafeLine(String line) {
    assertThat(line.indexOf('\n')).as("one line").isEqualTo(line.length() - 1);
    assertThat(line).doesNotContain("\r").doesNotContain("\u001b").doesNotContain("\u0000");
    assertThat(line).doesNotContain("\u0085").doesNotContain("\u2028");
  }
}
