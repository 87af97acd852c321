package dev.pubsubworker.runtime.pubsub;

import com.google.api.gax.retrying.RetrySettings;
import com.google.cloud.pubsub.v1.Publisher;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.TopicName;
import dev.pubsubworker.core.DurationText;
import dev.pubsubworker.pubsub.DeadLetterPublisher;
import io.opentelemetry.api.OpenTelemetry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's dead-letter publishers: one {@link Publisher} per dead-letter topic, created on the
 * first dead letter for it, with message ordering on (a dead letter keeps its ordering key) and
 * retries bounded by {@link #PUBLISH_TIMEOUT}; each subscription's receiver publishes through
 * {@link #forTopic}. {@link #shutdown} flushes and stops them all; call it after the handlers have
 * finished. Thread-safe.
 */
final class DeadLetterPublishers {

  /**
   * The longest one dead-letter publish may take, retries included; past it the publish counts as
   * failed and the original message is nacked.
   */
  static final Duration PUBLISH_TIMEOUT = Duration.ofSeconds(30);

  private static final Logger log = LoggerFactory.getLogger(DeadLetterPublishers.class);

  private final Function<String, Publisher> factory;
  private final Map<String, Publisher> publishers = new ConcurrentHashMap<>();
  private final Map<String, DeadLetterPublisher> letters = new ConcurrentHashMap<>();
  private volatile boolean shutDown;

  /**
   * Publishers on {@code connection}; with {@code clientTracing} present, the client's publish
   * tracing is on: a dead letter published while a delivery is current (its handler thread) gets a
   * {@code "<topic> create"} span under that delivery's trace, and carries it on as its {@code
   * googclient_traceparent}.
   */
  DeadLetterPublishers(PubSubConnection connection, Optional<OpenTelemetry> clientTracing) {
    this(topic -> create(connection, topic, clientTracing));
  }

  /** Publishers made by {@code factory} (topic path to a started publisher). */
  DeadLetterPublishers(Function<String, Publisher> factory) {
    this.factory = factory;
  }

  private static Publisher create(
      PubSubConnection connection, String topic, Optional<OpenTelemetry> clientTracing) {
    RetrySettings retries =
        RetrySettings.newBuilder()
            .setTotalTimeoutDuration(PUBLISH_TIMEOUT)
            .setInitialRetryDelayDuration(Duration.ofMillis(100))
            .setRetryDelayMultiplier(4)
            .setMaxRetryDelayDuration(Duration.ofSeconds(10))
            .setInitialRpcTimeoutDuration(Duration.ofSeconds(10))
            .setRpcTimeoutMultiplier(2)
            .setMaxRpcTimeoutDuration(PUBLISH_TIMEOUT)
            .build();
    try {
      Publisher.Builder b =
          connection
              .publisher(TopicName.parse(topic))
              .setEnableMessageOrdering(true)
              .setRetrySettings(retries);
      clientTracing.ifPresent(otel -> b.setOpenTelemetry(otel).setEnableOpenTelemetryTracing(true));
      return b.build();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create a publisher for " + topic, e);
    }
  }

  /**
   * Dead letters to {@code topic}: each is published on the topic's publisher (created by the first
   * one) and waited for at most {@link #PUBLISH_TIMEOUT} plus a second, so that the client's own
   * timeout fires first. A publish after {@link #shutdown}, or one whose publisher cannot be
   * created, fails (the original is nacked).
   */
  DeadLetterPublisher forTopic(String topic) {
    return new DeadLetterPublisher() {
      @Override
      public String topic() {
        return topic;
      }

      @Override
      public String publish(PubsubMessage letter) throws Exception {
        if (shutDown) {
          throw new IllegalStateException("the dead-letter publishers are shut down");
        }
        return letters
            .computeIfAbsent(
                topic,
                t ->
                    DeadLetterPublisher.of(
                        publishers.computeIfAbsent(t, factory), PUBLISH_TIMEOUT.plusSeconds(1)))
            .publish(letter);
      }

      @Override
      public String toString() {
        return "DeadLetterPublisher[" + topic + "]";
      }
    };
  }

  /** Flushes and stops every publisher, waiting at most {@code timeout} in all. Idempotent. */
  void shutdown(Duration timeout) {
    shutDown = true;
    long ends = System.nanoTime() + timeout.toNanos();
    for (Map.Entry<String, Publisher> e : publishers.entrySet()) {
      Publisher p = e.getValue();
      try {
        p.shutdown();
        long left = Math.max(0, ends - System.nanoTime());
        if (!p.awaitTermination(left, TimeUnit.NANOSECONDS)) {
          log.warn(
              "the dead-letter publisher of {} did not stop within {}",
              e.getKey(),
              DurationText.of(timeout));
        }
      } catch (InterruptedException ie) {
        Thread.currentThread().interrupt();
        return;
      } catch (RuntimeException re) {
        log.warn("the dead-letter publisher of {} failed to stop: {}", e.getKey(), re.toString());
      }
    }
    publishers.clear();
    letters.clear();
  }
}
