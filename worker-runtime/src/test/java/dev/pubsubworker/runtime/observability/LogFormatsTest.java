package dev.pubsubworker.runtime.observability;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.core.OutputStreamAppender;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.pubsubworker.runtime.config.KeyLogFormat;
import dev.pubsubworker.runtime.config.LogFormat;
import dev.pubsubworker.runtime.config.LogSourceLocation;
import dev.pubsubworker.runtime.config.LoggingConfig;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The shipped logging ({@code dev/pubsubworker/runtime/logback-worker.xml}, which an application's
 * {@code logback.xml} includes): its boot-time choice of format, and the run-time switch.
 */
class LogFormatsTest {

  private static final String WORKER_LOGGING = "dev/pubsubworker/runtime/logback-worker.xml";

  @Test
  void the_runtime_ships_no_logback_xml_of_its_own() {
    // An application that depends on the runtime keeps its own logging configuration; only the
    // runtime's tests bring a logback-test.xml, which includes the worker's logging.
    assertThat(LogFormatsTest.class.getClassLoader().getResource("logback.xml")).isNull();
  }

  @Test
  void logback_xml_picks_the_format_from_the_system_property_at_boot() throws Exception {
    assertThat(bootFormat("json")).isEqualTo(LogFormat.JSON);
    assertThat(bootFormat("TEXT")).isEqualTo(LogFormat.TEXT);
    assertThat(bootFormat("yaml")).as("unknown falls back to text").isEqualTo(LogFormat.TEXT);
  }

  @Test
  void logback_xml_picks_the_json_source_location_from_the_system_property_at_boot()
      throws Exception {
    assertThat(boot("pubsub-worker.logging.source-location", "all").getLogSourceLocation())
        .isEqualTo(LogSourceLocation.ALL);
    assertThat(boot("pubsub-worker.logging.source-location", "NONE").getLogSourceLocation())
        .isEqualTo(LogSourceLocation.NONE);
    assertThat(boot("pubsub-worker.logging.source-location", "loud").getLogSourceLocation())
        .as("unknown falls back to warn")
        .isEqualTo(LogSourceLocation.WARN);
    assertThat(boot("pubsub-worker.logging.format", "json").getLogSourceLocation())
        .as("the default")
        .isEqualTo(LogSourceLocation.WARN);
  }

  @Test
  void apply_of_the_logging_config_sets_the_format_and_the_source_location() throws Exception {
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    WorkerLogEncoder encoder = consoleEncoder(context);
    LogFormat format = encoder.getLogFormat();
    LogSourceLocation location = encoder.getLogSourceLocation();
    try {
      LoggingConfig logging =
          new LoggingConfig(LogFormat.JSON, KeyLogFormat.PLAIN, LogSourceLocation.ALL);
      assertThat(LogFormats.apply(logging)).isEqualTo(1);
      LoggingEvent e =
          new LoggingEvent(
              Logger.class.getName(), context.getLogger("x"), Level.INFO, "hello", null, null);
      e.setCallerData(new StackTraceElement[] {new StackTraceElement("a.B", "c", "B.java", 7)});
      String line = new String(encoder.encode(e), StandardCharsets.UTF_8);
      assertThat(
              new ObjectMapper()
                  .readTree(line)
                  .get(JsonLogLayout.SOURCE_LOCATION)
                  .get("function")
                  .asText())
          .isEqualTo("a.B.c");
      LogFormats.apply(
          new LoggingConfig(LogFormat.JSON, KeyLogFormat.PLAIN, LogSourceLocation.NONE));
      line = new String(encoder.encode(e), StandardCharsets.UTF_8);
      assertThat(new ObjectMapper().readTree(line).has(JsonLogLayout.SOURCE_LOCATION)).isFalse();
    } finally {
      encoder.setLogFormat(format);
      encoder.setLogSourceLocation(location);
    }
  }

  @Test
  void apply_switches_the_live_encoder_and_back() throws Exception {
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    WorkerLogEncoder encoder = consoleEncoder(context);
    LogFormat before = encoder.getLogFormat();
    LogSourceLocation location = encoder.getLogSourceLocation();
    try {
      assertThat(
              LogFormats.apply(
                  new LoggingConfig(LogFormat.JSON, KeyLogFormat.PLAIN, LogSourceLocation.WARN)))
          .isEqualTo(1);
      LoggingEvent e =
          new LoggingEvent(
              Logger.class.getName(), context.getLogger("x"), Level.INFO, "hello", null, null);
      String line = new String(encoder.encode(e), StandardCharsets.UTF_8);
      assertThat(new ObjectMapper().readTree(line).get("message").asText()).isEqualTo("hello");

      LogFormats.apply(
          new LoggingConfig(LogFormat.TEXT, KeyLogFormat.PLAIN, LogSourceLocation.WARN));
      line = new String(encoder.encode(e), StandardCharsets.UTF_8);
      // Outside a message: no empty "[  attempt= key= fence=]" placeholders.
      assertThat(line).endsWith(" INFO  x hello" + System.lineSeparator()).doesNotContain("[");
    } finally {
      encoder.setLogFormat(before);
      encoder.setLogSourceLocation(location);
    }
  }

  private static LogFormat bootFormat(String property) throws Exception {
    return boot("pubsub-worker.logging.format", property).getLogFormat();
  }

  /**
   * Configures a fresh logger context from the shipped logging with the property set; its console
   * encoder, stopped.
   */
  private static WorkerLogEncoder boot(String key, String property) throws Exception {
    String old = System.getProperty(key);
    System.setProperty(key, property);
    LoggerContext context = new LoggerContext();
    try {
      JoranConfigurator configurator = new JoranConfigurator();
      configurator.setContext(context);
      // What an application's logback.xml holds (worker-app's does): the runtime's include.
      URL worker = LogFormatsTest.class.getClassLoader().getResource(WORKER_LOGGING);
      assertThat(worker.toString()).contains("classes/" + WORKER_LOGGING);
      configurator.doConfigure(
          new java.io.ByteArrayInputStream(
              ("<configuration><include resource=\"" + WORKER_LOGGING + "\"/></configuration>")
                  .getBytes(StandardCharsets.UTF_8)));
      return consoleEncoder(context);
    } finally {
      context.stop();
      if (old == null) {
        System.clearProperty(key);
      } else {
        System.setProperty(key, old);
      }
    }
  }

  private static WorkerLogEncoder consoleEncoder(LoggerContext context) {
    OutputStreamAppender<ILoggingEvent> console =
        (OutputStreamAppender<ILoggingEvent>)
            context.getLogger(Logger.ROOT_LOGGER_NAME).getAppender("CONSOLE");
    return (WorkerLogEncoder) console.getEncoder();
  }
}
