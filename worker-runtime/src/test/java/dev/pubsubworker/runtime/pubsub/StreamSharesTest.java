package dev.pubsubworker.runtime.pubsub;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.api.gax.batching.FlowControlSettings;
import com.google.api.gax.batching.FlowController;
import dev.pubsubworker.runtime.config.ExactlyOnceMode;
import dev.pubsubworker.runtime.config.SubscriptionConfig;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A subscription's flow control split over its streams ({@link SubscriptionRunner#streamShares}):
 * the shares add up to the configured limits exactly, none is empty, and every stream blocks rather
 * than fails when its share is taken.
 */
class StreamSharesTest {

  private static SubscriptionConfig.ClientSettings client(int streams, int messages, long bytes) {
    return new SubscriptionConfig.ClientSettings(
        ExactlyOnceMode.AUTO,
        messages,
        bytes,
        streams,
        5,
        Duration.ofMinutes(60),
        Duration.ofSeconds(60),
        Duration.ofSeconds(60));
  }

  private static List<Long> messages(List<FlowControlSettings> shares) {
    return shares.stream().map(FlowControlSettings::getMaxOutstandingElementCount).toList();
  }

  private static List<Long> bytes(List<FlowControlSettings> shares) {
    return shares.stream().map(FlowControlSettings::getMaxOutstandingRequestBytes).toList();
  }

  @Test
  void one_stream_holds_the_whole_limit() {
    List<FlowControlSettings> shares = SubscriptionRunner.streamShares(client(1, 1000, 100L << 20));
    assertThat(messages(shares)).containsExactly(1000L);
    assertThat(bytes(shares)).containsExactly(100L << 20);
    assertThat(shares.get(0).getLimitExceededBehavior())
        .isEqualTo(FlowController.LimitExceededBehavior.Block);
  }

  @Test
  void the_shares_add_up_to_the_limits_and_the_first_streams_take_the_remainder() {
    List<FlowControlSettings> shares = SubscriptionRunner.streamShares(client(4, 10, 1003));
    assertThat(messages(shares)).containsExactly(3L, 3L, 2L, 2L);
    assertThat(bytes(shares)).containsExactly(251L, 251L, 251L, 250L);
    assertThat(shares)
        .allSatisfy(
            s ->
                assertThat(s.getLimitExceededBehavior())
                    .isEqualTo(FlowController.LimitExceededBehavior.Block));
  }

  @Test
  void there_are_never_more_streams_than_messages_allowed() {
    assertThat(messages(SubscriptionRunner.streamShares(client(4, 2, 100L << 20))))
        .containsExactly(1L, 1L);
    assertThat(messages(SubscriptionRunner.streamShares(client(64, 1, 100L << 20))))
        .containsExactly(1L);
  }

  @Test
  void there_are_never_more_streams_than_bytes_allowed() {
    // A share of 0 bytes would mean "no limit" to the server.
    assertThat(bytes(SubscriptionRunner.streamShares(client(4, 1000, 3))))
        .containsExactly(1L, 1L, 1L);
  }

  @Test
  void the_default_limits_over_64_streams() {
    List<FlowControlSettings> shares =
        SubscriptionRunner.streamShares(client(64, 1000, 100L << 20));
    assertThat(shares).hasSize(64);
    assertThat(messages(shares).stream().mapToLong(Long::longValue).sum()).isEqualTo(1000L);
    assertThat(bytes(shares).stream().mapToLong(Long::longValue).sum()).isEqualTo(100L << 20);
    assertThat(messages(shares)).allSatisfy(m -> assertThat(m).isBetween(15L, 16L));
  }
}
