package dev.pubsubworker.runtime.observability;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.core.AppenderBase;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pubsubworker.runtime.config.LogSourceLocation;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The JSON line format, parsed back with Jackson. */
class JsonLogLayoutTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final StackTraceElement CALLER =
      new StackTraceElement("dev.pubsubworker.pubsub.Failures", "inProgress", "Failures.java", 212);
  private static final StackTraceElement OUTER =
      new StackTraceElement("dev.pubsubworker.pubsub.GuardedRun", "run", "GuardedRun.java", 80);

  private final LoggerContext context = new LoggerContext();
  private final Logger logger = context.getLogger("dev.pubsubworker.runtime.pubsub.Dispatcher");
  private final JsonLogLayout layout = new JsonLogLayout();

  JsonLogLayoutTest() {
    context.setMDCAdapter(org.slf4j.MDC.getMDCAdapter());
    layout.setContext(context);
    layout.start();
  }

  @Test
  void a_line_carries_time_severity_message_logger_thread_and_the_mdc_fields() throws Exception {
    LoggingEvent e = event(Level.WARN, "key {} is in progress elsewhere", null, "orders:po-7");
    e.setMDCPropertyMap(
        Map.of(
            "subscription", "orders",
            "messageId", "1234",
            "deliveryAttempt", "2",
            "key", "orders:po-7",
            "fence", "3",
            "requestId", "r-9"));
    e.setInstant(Instant.parse("2025-05-01T12:00:00.123456789Z"));
    String line = layout.doLayout(e);

    assertThat(line).endsWith(System.lineSeparator()).doesNotContain("\n{");
    assertThat(line.strip()).doesNotContain("\n");
    JsonNode n = JSON.readTree(line);
    assertThat(n.get("time").asText()).isEqualTo("2025-05-01T12:00:00.123456789Z");
    assertThat(n.get("severity").asText()).isEqualTo("WARNING");
    assertThat(n.get("message").asText()).isEqualTo("key orders:po-7 is in progress elsewhere");
    assertThat(n.get("logger").asText()).isEqualTo("dev.pubsubworker.runtime.pubsub.Dispatcher");
    assertThat(n.get("thread").asText()).isEqualTo("handler-orders-1");
    assertThat(n.get("subscription").asText()).isEqualTo("orders");
    assertThat(n.get("messageId").asText()).isEqualTo("1234");
    assertThat(n.get("deliveryAttempt").isInt()).isTrue();
    assertThat(n.get("deliveryAttempt").asInt()).isEqualTo(2);
    assertThat(n.get("key").asText()).isEqualTo("orders:po-7");
    assertThat(n.get("fence").asLong()).isEqualTo(3);
    assertThat(n.get("mdc").get("requestId").asText()).isEqualTo("r-9");
    assertThat(n.has("@type")).isFalse();
    // The worker's low-cardinality fields as Cloud Logging labels: the subscription, nothing else.
    assertThat(n.get(JsonLogLayout.LABELS).size()).isEqualTo(1);
    assertThat(n.get(JsonLogLayout.LABELS).get("subscription").asText()).isEqualTo("orders");
    assertThat(line)
        .startsWith(
            "{\"time\":\"2025-05-01T12:00:00.123456789Z\",\"severity\":\"WARNING\",\"message\":");
  }

  @Test
  void absent_mdc_fields_are_left_out() throws Exception {
    LoggingEvent e = event(Level.INFO, "worker started", null);
    e.setCallerData(new StackTraceElement[] {CALLER});
    JsonNode n = JSON.readTree(layout.doLayout(e));
    // No labels outside a message, and no source location on INFO by default.
    assertThat(n.fieldNames())
        .toIterable()
        .containsExactly("time", "severity", "message", "logger", "thread");
    assertThat(Instant.parse(n.get("time").asText())).isNotNull();
  }

  @Test
  void warn_and_error_lines_carry_their_source_location_as_cloud_logging_reads_it()
      throws Exception {
    assertThat(layout.getSourceLocation()).isEqualTo(LogSourceLocation.WARN);
    for (Level level : new Level[] {Level.WARN, Level.ERROR}) {
      LoggingEvent e = event(level, "lock store failed", null);
      e.setCallerData(new StackTraceElement[] {CALLER, OUTER});
      String line = layout.doLayout(e);
      JsonNode location = JSON.readTree(line).get(JsonLogLayout.SOURCE_LOCATION);
      assertThat(location.get("file").asText()).isEqualTo("Failures.java");
      // A string, as LogEntrySourceLocation's int64 line is in JSON.
      assertThat(location.get("line").isTextual()).isTrue();
      assertThat(location.get("line").asText()).isEqualTo("212");
      assertThat(location.get("function").asText())
          .isEqualTo("dev.pubsubworker.pubsub.Failures.inProgress");
      assertThat(location.size()).isEqualTo(3);
      assertThat(line)
          .contains(
              "\"thread\":\"handler-orders-1\",\"logging.googleapis.com/sourceLocation\":{\"file\":"
                  + "\"Failures.java\",\"line\":\"212\",\"function\":");
    }
    for (Level level : new Level[] {Level.TRACE, Level.DEBUG, Level.INFO}) {
      LoggingEvent e = event(level, "claimed", null);
      e.setCallerData(new StackTraceElement[] {CALLER});
      assertThat(JSON.readTree(layout.doLayout(e)).has(JsonLogLayout.SOURCE_LOCATION)).isFalse();
    }
  }

  @Test
  void the_source_location_setting_selects_the_lines_and_unknown_parts_are_left_out()
      throws Exception {
    LoggingEvent info = event(Level.INFO, "claimed", null);
    info.setCallerData(new StackTraceElement[] {CALLER});
    LoggingEvent error = event(Level.ERROR, "failed", null);
    error.setCallerData(
        new StackTraceElement[] {new StackTraceElement("dev.x.Generated", "run", null, -1)});
    LoggingEvent unknown = event(Level.ERROR, "failed", null);
    unknown.setCallerData(new StackTraceElement[0]);
    try {
      layout.setSourceLocation(LogSourceLocation.ALL);
      assertThat(JSON.readTree(layout.doLayout(info)).get(JsonLogLayout.SOURCE_LOCATION))
          .isNotNull();
      JsonNode partial = JSON.readTree(layout.doLayout(error)).get(JsonLogLayout.SOURCE_LOCATION);
      assertThat(partial.size()).isEqualTo(1);
      assertThat(partial.get("function").asText()).isEqualTo("dev.x.Generated.run");
      assertThat(JSON.readTree(layout.doLayout(unknown)).has(JsonLogLayout.SOURCE_LOCATION))
          .isFalse();
      layout.setSourceLocation(LogSourceLocation.NONE);
      assertThat(JSON.readTree(layout.doLayout(error)).has(JsonLogLayout.SOURCE_LOCATION))
          .isFalse();
    } finally {
      layout.setSourceLocation(LogSourceLocation.WARN);
    }
  }

  @Test
  void a_real_logger_call_is_located_at_its_caller() throws Exception {
    List<String> lines = new ArrayList<>();
    AppenderBase<ILoggingEvent> appender =
        new AppenderBase<>() {
          @Override
          protected void append(ILoggingEvent event) {
            lines.add(layout.doLayout(event));
          }
        };
    appender.setContext(context);
    appender.start();
    logger.addAppender(appender);
    int line;
    try {
      line = new Throwable().getStackTrace()[0].getLineNumber() + 1;
      logger.warn("located {}", "here");
    } finally {
      logger.detachAppender(appender);
    }
    JsonNode location = JSON.readTree(lines.get(0)).get(JsonLogLayout.SOURCE_LOCATION);
    assertThat(location.get("file").asText()).isEqualTo("JsonLogLayoutTest.java");
    assertThat(location.get("line").asText()).isEqualTo(String.valueOf(line));
    assertThat(location.get("function").asText())
        .isEqualTo(
            JsonLogLayoutTest.class.getName() + ".a_real_logger_call_is_located_at_its_caller");
  }

  @Test
  void labels_hold_only_the_subscription_and_the_trace_fields_stay_top_level() throws Exception {
    LoggingEvent e = event(Level.INFO, "x", null);
    e.setMDCPropertyMap(
        Map.of(
            "messageId",
            "1234",
            "key",
            "orders:po-7",
            "fence",
            "3",
            MdcKeys.TRACE,
            "projects/p/traces/4bf92f3577b34da6a3ce929d0e0e4736",
            MdcKeys.SPAN_ID,
            "00f067aa0ba902b7",
            MdcKeys.TRACE_SAMPLED,
            "true",
            "tenant",
            "acme"));
    JsonNode n = JSON.readTree(layout.doLayout(e));
    assertThat(n.has(JsonLogLayout.LABELS)).as("no subscription, no labels").isFalse();
    assertThat(n.get(MdcKeys.TRACE).asText())
        .isEqualTo("projects/p/traces/4bf92f3577b34da6a3ce929d0e0e4736");
    assertThat(n.get(MdcKeys.SPAN_ID).asText()).isEqualTo("00f067aa0ba902b7");
    assertThat(n.get(MdcKeys.TRACE_SAMPLED).isBoolean()).isTrue();
    assertThat(n.get("mdc").get("tenant").asText()).isEqualTo("acme");

    LoggingEvent withSubscription = event(Level.INFO, "x", null);
    Map<String, String> mdc = new java.util.HashMap<>(e.getMDCPropertyMap());
    mdc.put("subscription", "orders");
    withSubscription.setMDCPropertyMap(mdc);
    JsonNode labels = JSON.readTree(layout.doLayout(withSubscription)).get(JsonLogLayout.LABELS);
    assertThat(labels.size()).isEqualTo(1);
    assertThat(labels.get("subscription").asText()).isEqualTo("orders");
  }

  @Test
  void levels_map_to_cloud_logging_severities() {
    assertThat(JsonLogLayout.severity(Level.TRACE)).isEqualTo("DEBUG");
    assertThat(JsonLogLayout.severity(Level.DEBUG)).isEqualTo("DEBUG");
    assertThat(JsonLogLayout.severity(Level.INFO)).isEqualTo("INFO");
    assertThat(JsonLogLayout.severity(Level.WARN)).isEqualTo("WARNING");
    assertThat(JsonLogLayout.severity(Level.ERROR)).isEqualTo("ERROR");
  }

  @Test
  void an_error_carries_its_stack_trace_in_the_message_for_error_reporting() throws Exception {
    IllegalStateException failure =
        new IllegalStateException("supplier timed out", new java.io.IOException("reset"));
    JsonNode n = JSON.readTree(layout.doLayout(event(Level.ERROR, "handler failed", failure)));
    String message = n.get("message").asText();
    assertThat(message)
        .startsWith("handler failed\njava.lang.IllegalStateException: supplier timed out\n\tat ")
        .contains("Caused by: java.io.IOException: reset");
    assertThat(n.get("severity").asText()).isEqualTo("ERROR");
    assertThat(n.get("@type").asText()).isEqualTo(JsonLogLayout.ERROR_REPORTING_TYPE);
  }

  @Test
  void any_text_is_escaped_into_valid_json() throws Exception {
    String nasty =
        "quote \" backslash \\ newline \n tab \t cr \r nul \u0000 bell \u0007 del \u007f"
            + " ls \u2028 emoji \ud83d\ude00 lone \ud800 end \udc00 é ü 中";
    JsonNode n = JSON.readTree(layout.doLayout(event(Level.INFO, nasty, null)));
    String expected = nasty.replace('\ud800', '\ufffd').replace('\udc00', '\ufffd');
    assertThat(n.get("message").asText()).isEqualTo(expected);
    StringBuilder sb = new StringBuilder();
    JsonLogLayout.string(sb, "\u0001\"");
    assertThat(sb).hasToString("\"\\u0001\\\"\"");
  }

  @Test
  void what_the_text_format_escapes_never_appears_raw_in_a_json_line() throws Exception {
    // C1 controls (NEL, CSI), DEL, the separators, and bidirectional overrides and isolates.
    String hostile =
        "nel \u0085 csi \u009b[31m del \u007f ls \u2028 ps \u2029 rlo \u202e lri \u2066 pdi"
            + " \u2069 lre \u202a";
    LoggingEvent e = event(Level.WARN, "key {} failed", null, hostile);
    e.setMDCPropertyMap(Map.of("key", hostile, "requestId", hostile));
    String line = layout.doLayout(e);
    for (char c : new char[] {0x85, 0x9b, 0x7f, 0x2028, 0x2029, 0x202e, 0x2066, 0x2069, 0x202a}) {
      assertThat(line.indexOf(c)).as("U+%04X raw in %s", (int) c, line).isEqualTo(-1);
      assertThat(ControlCharacters.escape(String.valueOf(c)))
          .as("the text format escapes U+%04X too", (int) c)
          .isEqualTo(String.format("\\u%04x", (int) c));
    }
    assertThat(line).contains("nel \\u0085 csi \\u009b[31m").contains("rlo \\u202e");
    JsonNode n = JSON.readTree(line);
    assertThat(n.get("message").asText()).isEqualTo("key " + hostile + " failed");
    assertThat(n.get("key").asText()).isEqualTo(hostile);
    assertThat(n.get("mdc").get("requestId").asText()).isEqualTo(hostile);
  }

  @Test
  void a_numeric_field_that_is_not_a_number_stays_a_string() throws Exception {
    LoggingEvent e = event(Level.INFO, "x", null);
    e.setMDCPropertyMap(Map.of("deliveryAttempt", "unknown", "fence", "007"));
    JsonNode n = JSON.readTree(layout.doLayout(e));
    assertThat(n.get("deliveryAttempt").isTextual()).isTrue();
    assertThat(n.get("fence").asText()).isEqualTo("007");
    assertThat(n.get("fence").isTextual()).isTrue();
  }

  private LoggingEvent event(Level level, String message, Throwable t, Object... args) {
    LoggingEvent e = new LoggingEvent(Logger.class.getName(), logger, level, message, t, args);
    e.setThreadName("handler-orders-1");
    return e;
  }
}
