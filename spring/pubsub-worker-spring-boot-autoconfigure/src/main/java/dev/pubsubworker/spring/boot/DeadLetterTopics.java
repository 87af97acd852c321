package dev.pubsubworker.spring.boot;

import com.google.api.gax.retrying.RetrySettings;
import com.google.api.gax.rpc.ClientSettings;
import com.google.cloud.pubsub.v1.Publisher;
import com.google.pubsub.v1.TopicName;
import dev.pubsubworker.pubsub.DeadLetterPublisher;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One dead-letter {@link Publisher} per topic, shared by the subscriptions that name it, on Spring
 * Cloud GCP's publisher channel and credentials, with message ordering on (a letter keeps its
 * ordering key) and retries bounded by {@link #PUBLISH_TIMEOUT}, so a letter that cannot be
 * published nacks its original in bounded time. Thread-safe.
 */
final class DeadLetterTopics {

  /** The longest one dead-letter publish may take, retries included: 30 s. */
  static final Duration PUBLISH_TIMEOUT = DeadLetterPublisher.DEFAULT_PUBLISH_TIMEOUT;

  private static final Logger log = LoggerFactory.getLogger(DeadLetterTopics.class);

  private final ClientSettings<?> settings;
  private final Map<String, Publisher> publishers = new ConcurrentHashMap<>();

  /**
   * @param settings the channel, credentials and headers of Spring Cloud GCP's publishers (its
   *     {@code TopicAdminSettings})
   */
  DeadLetterTopics(ClientSettings<?> settings) {
    this.settings = settings;
  }

  /** The dead-letter publisher of {@code topic}. */
  DeadLetterPublisher forTopic(TopicName topic) {
    Publisher publisher = publishers.computeIfAbsent(topic.toString(), t -> create(topic));
    // The client's own retries end at PUBLISH_TIMEOUT; the wait a second later, so they fire first.
    return DeadLetterPublisher.of(publisher, PUBLISH_TIMEOUT.plusSeconds(1));
  }

  private Publisher create(TopicName topic) {
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
      return Publisher.newBuilder(topic)
          .setChannelProvider(settings.getTransportChannelProvider())
          .setCredentialsProvider(settings.getCredentialsProvider())
          .setHeaderProvider(settings.getHeaderProvider())
          .setEnableMessageOrdering(true)
          .setRetrySettings(retries)
          .build();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the dead-letter publisher of " + topic, e);
    }
  }

  /** Flushes and stops every publisher, waiting at most {@code timeout} in all. Idempotent. */
  void shutdown(Duration timeout) {
    long ends = System.nanoTime() + timeout.toNanos();
    for (Map.Entry<String, Publisher> e : publishers.entrySet()) {
      try {
        e.getValue().shutdown();
        long left = Math.max(0, ends - System.nanoTime());
        if (!e.getValue().awaitTermination(left, TimeUnit.NANOSECONDS)) {
          log.warn("the dead-letter publisher of {} did not stop within {}", e.getKey(), timeout);
        }
      } catch (InterruptedException ie) {
        Thread.currentThread().interrupt();
        return;
      } catch (RuntimeException re) {
        log.warn("the dead-letter publisher of {} failed to stop: {}", e.getKey(), re.toString());
      }
    }
    publishers.clear();
  }
}
