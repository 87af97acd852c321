package dev.pubsubworker.runtime.observability;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.LoggingEvent;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The JSON line format, parsed back with Jackson. */
class JsonLogLayoutTest {

  private static final ObjectMapper JSON = new ObjectMapper();

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
    assertThat(line)
        .startsWith(
            "{\"time\":\"2025-05-01T12:00:00.123456789Z\",\"severity\":\"WARNING\",\"message\":");
  }

  @Test
  void absent_mdc_fields_are_left_out() throws Exception {
    JsonNode n = JSON.readTree(layout.doLayout(event(Level.INFO, "worker started", null)));
    assertThat(n.fieldNames())
        .toIterable()
        .containsExactly("time", "severity", "message", "logger", "thread");
    assertThat(Instant.parse(n.get("time").asText())).isNotNull();
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
