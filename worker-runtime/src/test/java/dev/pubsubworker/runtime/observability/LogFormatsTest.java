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
import dev.pubsubworker.runtime.config.LogFormat;
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
  void apply_switches_the_live_encoder_and_back() throws Exception {
    LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
    WorkerLogEncoder encoder = consoleEncoder(context);
    LogFormat before = encoder.getLogFormat();
    try {
      assertThat(LogFormats.apply(LogFormat.JSON)).isEqualTo(1);
      LoggingEvent e =
          new LoggingEvent(
              Logger.class.getName(), context.getLogger("x"), Level.INFO, "hello", null, null);
      String line = new String(encoder.encode(e), StandardCharsets.UTF_8);
      assertThat(new ObjectMapper().readTree(line).get("message").asText()).isEqualTo("hello");

      LogFormats.apply(LogFormat.TEXT);
      line = new String(encoder.encode(e), StandardCharsets.UTF_8);
      // Outside a message: no empty "[  attempt= key= fence=]" placeholders.
      assertThat(line).endsWith(" INFO  x hello" + System.lineSeparator()).doesNotContain("[");
    } finally {
      encoder.setLogFormat(before);
    }
  }

  /** Configures a fresh logger context from the shipped logging with the property set. */
  private static LogFormat bootFormat(String property) throws Exception {
    String key = "pubsub-worker.logging.format";
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
      return consoleEncoder(context).getLogFormat();
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
