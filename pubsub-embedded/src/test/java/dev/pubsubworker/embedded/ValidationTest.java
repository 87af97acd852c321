package dev.pubsubworker.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import com.google.pubsub.v1.PubsubMessage;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Pub/Sub's publish limits and retention bounds at their edges, without a server. */
class ValidationTest {

  private static PubsubMessage.Builder data(String text) {
    return PubsubMessage.newBuilder().setData(ByteString.copyFromUtf8(text));
  }

  private static void assertRefused(List<PubsubMessage> messages, String why) {
    assertThatThrownBy(() -> Validation.checkPublish(messages))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT))
        .hasMessageContaining(why);
  }

  private static void assertAccepted(List<PubsubMessage> messages) {
    assertThatCode(() -> Validation.checkPublish(messages)).doesNotThrowAnyException();
  }

  @Test
  void a_request_holds_one_to_a_thousand_messages() {
    List<PubsubMessage> thousand = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      thousand.add(data("m").build());
    }
    assertAccepted(thousand);

    thousand.add(data("m").build());
    assertRefused(
        thousand, "Too many messages to publish: at most 1000 in one request, but there were 1001");
    assertRefused(List.of(), "at least one message");
  }

  @Test
  void a_message_needs_data_or_an_attribute() {
    assertRefused(List.of(PubsubMessage.getDefaultInstance()), "Some messages are empty");
    assertRefused(
        List.of(PubsubMessage.newBuilder().setOrderingKey("k").build()), "Some messages are empty");
    assertAccepted(List.of(PubsubMessage.newBuilder().putAttributes("k", "").build()));
  }

  @Test
  void a_message_has_at_most_a_hundred_attributes() {
    Map<String, String> attributes = new HashMap<>();
    for (int i = 0; i < 100; i++) {
      attributes.put("k" + i, "v");
    }
    assertAccepted(List.of(PubsubMessage.newBuilder().putAllAttributes(attributes).build()));

    attributes.put("one-more", "v");
    assertRefused(
        List.of(PubsubMessage.newBuilder().putAllAttributes(attributes).build()),
        "at most 100 attributes, but one has 101");
  }

  @Test
  void attribute_keys_and_values_are_measured_in_utf8_bytes() {
    assertAccepted(List.of(PubsubMessage.newBuilder().putAttributes("k".repeat(256), "v").build()));
    assertAccepted(List.of(PubsubMessage.newBuilder().putAttributes("é".repeat(128), "v").build()));
    assertAccepted(
        List.of(PubsubMessage.newBuilder().putAttributes("k", "v".repeat(1024)).build()));

    assertRefused(
        List.of(PubsubMessage.newBuilder().putAttributes("k".repeat(257), "v").build()),
        "An attribute key must be at most 256 bytes, but one is 257 bytes");
    assertRefused(
        List.of(PubsubMessage.newBuilder().putAttributes("é".repeat(129), "v").build()),
        "but one is 258 bytes");
    assertRefused(
        List.of(PubsubMessage.newBuilder().putAttributes("k", "€".repeat(342)).build()),
        "An attribute value must be at most 1024 bytes, but the value of k is 1026 bytes");
  }

  @Test
  void an_error_quotes_at_most32_characters_of_a_key() {
    assertThatThrownBy(
            () ->
                Validation.checkPublish(
                    List.of(
                        PubsubMessage.newBuilder().putAttributes("x".repeat(300), "v").build())))
        .hasMessageEndingWith("(key=" + "x".repeat(32) + "…)");
  }

  @Test
  void
      keys_starting_with_goog_are_reserved_but_the_client_libraries_googclient_prefix_is_allowed() {
    assertRefused(
        List.of(PubsubMessage.newBuilder().putAttributes("goog", "v").build()), "reserved");
    assertRefused(
        List.of(PubsubMessage.newBuilder().putAttributes("googclient", "v").build()), "reserved");
    assertAccepted(
        List.of(PubsubMessage.newBuilder().putAttributes("googclient_traceparent", "v").build()));
    // The prefix is matched as Pub/Sub writes it, in lower case.
    assertAccepted(List.of(PubsubMessage.newBuilder().putAttributes("Google", "v").build()));
    assertAccepted(List.of(PubsubMessage.newBuilder().putAttributes("ago", "v").build()));
  }

  @Test
  void an_ordering_key_is_at_most1024_bytes() {
    assertAccepted(List.of(data("x").setOrderingKey("o".repeat(1024)).build()));
    assertRefused(
        List.of(data("x").setOrderingKey("o".repeat(1023) + "é").build()),
        "An ordering key must be at most 1024 bytes, but one is 1025 bytes");
  }

  @Test
  void a_request_is_at_most_ten_megabytes_in_all() {
    int limit = Validation.MAX_PUBLISH_REQUEST_BYTES;
    PubsubMessage half =
        PubsubMessage.newBuilder().setData(ByteString.copyFrom(new byte[limit / 2 - 8])).build();
    assertAccepted(List.of(half, half));

    PubsubMessage more =
        PubsubMessage.newBuilder().setData(ByteString.copyFrom(new byte[limit / 2])).build();
    assertRefused(List.of(more, more), "Request payload size exceeds the limit: 10485760 bytes.");
  }

  @Test
  void retention_is_ten_minutes_to_thirty_one_days() {
    assertThatCode(() -> Validation.checkRetention(proto(Duration.ofMinutes(10))))
        .doesNotThrowAnyException();
    assertThatCode(() -> Validation.checkRetention(proto(Duration.ofDays(31))))
        .doesNotThrowAnyException();

    assertThatThrownBy(
            () -> Validation.checkRetention(proto(Duration.ofMinutes(10).minusMillis(1))))
        .hasMessageContaining("message_retention_duration out of bounds")
        .hasMessageEndingWith("but was 599.999s");
    assertThatThrownBy(() -> Validation.checkRetention(proto(Duration.ofDays(31).plusSeconds(1))))
        .hasMessageEndingWith("but was 2678401s");
  }

  @Test
  void an_expiration_ttl_is_at_least_one_day() {
    assertThatCode(() -> Validation.checkExpirationTtl(proto(Duration.ofDays(1))))
        .doesNotThrowAnyException();
    assertThatThrownBy(() -> Validation.checkExpirationTtl(proto(Duration.ofHours(23))))
        .hasMessage(
            "INVALID_ARGUMENT: expiration_policy.ttl out of bounds: must be at least 1 day"
                + " (86400s), but was 82800s");
  }

  private static com.google.protobuf.Duration proto(Duration duration) {
    return Validation.toProto(duration);
  }
}
