package dev.pubsubworker.embedded;

import static org.awaitility.Awaitility.await;

import com.google.pubsub.v1.SubscriptionName;
import dev.pubsubworker.testkit.ManualTime;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** The differential suite against the embedded server, on a manual clock. */
class EmbeddedScenariosTest extends PubSubScenarios {

  private static final ManualTime TIME = new ManualTime();
  private static EmbeddedPubSub server;
  private static PubSubTarget target;

  @BeforeAll
  static void start() {
    server = EmbeddedPubSub.newBuilder().setClock(TIME.clock()).start();
    target = new PubSubTarget(server.hostPort(), "embedded-project");
  }

  @AfterAll
  static void stop() {
    target.close();
    server.close();
  }

  @Override
  PubSubTarget target() {
    return target;
  }

  @Override
  void elapse(Duration duration) {
    TIME.advance(duration);
    server.tick();
  }

  @Override
  void awaitOpenStreams(SubscriptionName subscription, int count) {
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> server.openStreams(subscription.toString()) == count);
  }

  @Override
  Set<Divergence> divergences() {
    return Set.of();
  }
}
