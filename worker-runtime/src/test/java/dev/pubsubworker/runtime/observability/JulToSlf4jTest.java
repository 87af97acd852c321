package dev.pubsubworker.runtime.observability;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.logging.LogManager;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.slf4j.bridge.SLF4JBridgeHandler;

/**
 * The shipped logging (logback-worker.xml, as logback-test.xml includes it) routes
 * java.util.logging through logback, and a bridged line's source location is the code that called
 * java.util.logging.
 */
class JulToSlf4jTest {

  @Test
  void jul_records_reach_logback_with_mapped_levels_formatted_messages_and_throwables() {
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    assertThat(LogManager.getLogManager().getLogger("").getHandlers())
        .hasOnlyElementsOfType(SLF4JBridgeHandler.class)
        .hasSize(1);
    Logger target = context.getLogger("dev.pubsubworker.jultest");
    ListAppender<ILoggingEvent> events = new ListAppender<>();
    events.setContext(context);
    events.start();
    target.addAppender(events);
    try {
      java.util.logging.Logger jul = java.util.logging.Logger.getLogger("dev.pubsubworker.jultest");
      jul.log(java.util.logging.Level.WARNING, "disk {0} is full", "sda");
      jul.log(java.util.logging.Level.SEVERE, "stream failed", new IllegalStateException("reset"));
      jul.fine("below INFO: dropped by logback's level");

      assertThat(events.list).hasSize(2);
      assertThat(events.list.get(0).getLevel()).isEqualTo(Level.WARN);
      assertThat(events.list.get(0).getFormattedMessage()).isEqualTo("disk sda is full");
      assertThat(events.list.get(1).getLevel()).isEqualTo(Level.ERROR);
      assertThat(events.list.get(1).getThrowableProxy().getMessage()).isEqualTo("reset");
    } finally {
      target.detachAppender(events);
    }
  }

  @Test
  void a_bridged_warning_is_located_at_the_code_that_called_java_util_logging() throws Exception {
    java.util.logging.Logger jul = java.util.logging.Logger.getLogger("dev.pubsubworker.jultest");
    String line;
    int at;
    try (CapturedLog captured = CapturedLog.attach("json")) {
      at = new Throwable().getStackTrace()[0].getLineNumber() + 1;
      jul.warning("channel closed");
      line = captured.events.stream().filter(l -> l.contains("channel closed")).findFirst().get();
    }
    JsonNode location = new ObjectMapper().readTree(line).get(JsonLogLayout.SOURCE_LOCATION);
    // Past java.util.logging's frames and the bridge's, not in them.
    assertThat(location.get("function").asText())
        .isEqualTo(
            JulToSlf4jTest.class.getName()
                + ".a_bridged_warning_is_located_at_the_code_that_called_java_util_logging");
    assertThat(location.get("file").asText()).isEqualTo("JulToSlf4jTest.java");
    assertThat(location.get("line").asText()).isEqualTo(String.valueOf(at));
  }
}
