package dev.pubsubworker.runtime.observability;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.LoggingEvent;
import dev.pubsubworker.api.MessageHandler;
import dev.pubsubworker.runtime.testing.WorkerHarness;
import dev.pubsubworker.testservices.SubscriptionSpec;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Log forging through the real text encoder: keys, attributes and message text carrying CR, LF,
 * ANSI escapes, NUL and other controls are written as visible escapes, one event per line, and
 * lines outside a message carry no empty MDC placeholders.
 */
class TextLogForgingTest {

  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final String FORGED_LINE = "12:00:00.000 INFO  forged [audit] admin logged in";
  private static final String HOSTILE =
      "po-1\r\n" + FORGED_LINE + "\u001b[31mRED\u001b[0m\u0000nul\u0085nel\u2028ls\ttab";

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

  private static void assertOneSafeLine(String line) {
    assertThat(line.indexOf('\n')).as("one line").isEqualTo(line.length() - 1);
    assertThat(line).doesNotContain("\r").doesNotContain("\u001b").doesNotContain("\u0000");
    assertThat(line).doesNotContain("\u0085").doesNotContain("\u2028");
  }
}
