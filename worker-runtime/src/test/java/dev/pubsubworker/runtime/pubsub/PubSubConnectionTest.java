package dev.pubsubworker.runtime.pubsub;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.google.cloud.pubsub.v1.MessageReceiver;
import com.google.cloud.pubsub.v1.Subscriber;
import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import dev.pubsubworker.testservices.PubSubEmulator;
import dev.pubsubworker.testservices.SubscriptionFixture;
import dev.pubsubworker.testservices.SubscriptionSpec;
import dev.pubsubworker.testservices.TestServices;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The WARN when a pull on the emulator channel exceeds its inbound limit. */
class PubSubConnectionTest {

  @Test
  void a_pull_over_the_inbound_limit_is_logged_at_warn_instead_of_looping_in_silence()
      throws Exception {
    PubSubEmulator pubsub = TestServices.pubsub();
    SubscriptionFixture fixture = pubsub.createSubscription(SubscriptionSpec.defaults());
    pubsub.publish(
        fixture.topic(),
        PubsubMessage.newBuilder().setData(ByteString.copyFrom(new byte[2_000_000])).build());
    Logger logger = (Logger) LoggerFactory.getLogger(PubSubConnection.class);
    ListAppender<ILoggingEvent> events = new ListAppender<>();
    events.start();
    logger.addAppender(events);
    // A 1 MiB limit stands for gRPC's 4 MiB default against a 9 MB message.
    try (PubSubConnection connection =
        PubSubConnection.create(Optional.of(pubsub.hostPort()), 1024 * 1024)) {
      Subscriber subscriber =
          Subscriber.newBuilder(
                  fixture.subscription().toString(), (MessageReceiver) (m, reply) -> reply.ack())
              .setChannelProvider(connection.channelProvider().orElseThrow())
              .setCredentialsProvider(connection.credentialsProvider())
              .build();
      subscriber.startAsync().awaitRunning(30, TimeUnit.SECONDS);
      try {
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> events.list.stream().anyMatch(e -> e.getLevel() == Level.WARN));
      } finally {
        subscriber.stopAsync().awaitTerminated(30, TimeUnit.SECONDS);
      }
    } finally {
      logger.detachAppender(events);
    }
    List<String> warnings =
        events.list.stream()
            .filter(e -> e.getLevel() == Level.WARN)
            .map(ILoggingEvent::getFormattedMessage)
            .toList();
    assertThat(warnings.get(0))
        .contains("failed with RESOURCE_EXHAUSTED")
        .contains("inbound limit of 1048576 bytes");
    assertThat(warnings).as("rate-limited to one per 30 s").hasSize(1);
  }
}
