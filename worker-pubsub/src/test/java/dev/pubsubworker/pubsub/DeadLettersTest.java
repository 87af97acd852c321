package dev.pubsubworker.pubsub;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.pubsub.v1.PubsubMessage;
import dev.pubsubworker.api.InboundMessage;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The dead letter's content, and attribute values cut to Pub/Sub's limit as valid UTF-8. */
class DeadLettersTest {

  private static final Instant NOW = Instant.parse("2026-12-01T04:00:00.123Z");

  private final DeadLetters deadLetters =
      new DeadLetters(
          "orders",
          "projects/p/subscriptions/orders-sub",
          null,
          "worker-7",
          new RepeatLimiter(Duration.ofSeconds(10), Clock.systemUTC()),
          Clock.fixed(NOW, ZoneOffset.UTC));

  @Test
  void a_dead_letter_keeps_data_attributes_and_ordering_key_and_adds_ours_over_same_named_ones() {
    InboundMessage m =
        new InboundMessage(
            "m-1",
            "payload".getBytes(StandardCharsets.UTF_8),
            Map.of("order_id", "po-1", "pubsub-worker-worker-id", "forged"),
            "customer-9",
            Instant.parse("2026-12-01T03:59:00Z"),
            3);
    PubsubMessage letter =
        deadLetters.letter(
            m,
            new DeadLetters.Failure(
                "com.example.Bad", "unparseable", "failed", Outcome.FAILED, null));
    assertThat(letter.getData().toStringUtf8()).isEqualTo("payload");
    assertThat(letter.getOrderingKey()).isEqualTo("customer-9");
    assertThat(letter.getAttributesMap())
        .containsEntry("order_id", "po-1")
        .containsEntry("pubsub-worker-subscription", "projects/p/subscriptions/orders-sub")
        .containsEntry("pubsub-worker-message-id", "m-1")
        .containsEntry("pubsub-worker-publish-time", "2026-12-01T03:59:00Z")
        .containsEntry("pubsub-worker-delivery-attempt", "3")
        .containsEntry("pubsub-worker-error-class", "com.example.Bad")
        .containsEntry("pubsub-worker-error-message", "unparseable")
        .containsEntry("pubsub-worker-worker-id", "worker-7")
        .containsEntry("pubsub-worker-dead-lettered-at", "2026-12-01T04:00:00.123Z")
        .containsEntry("CloudPubSubDeadLetterSourceSubscription", "orders-sub")
        .containsEntry("CloudPubSubDeadLetterSourceSubscriptionProject", "p")
        .containsEntry("CloudPubSubDeadLetterSourceDeliveryCount", "3")
        .containsEntry("CloudPubSubDeadLetterSourceTopicPublishTime", "2026-12-01T03:59:00Z")
        .hasSize(13);
  }

  @Test
  void a_republished_message_is_keyed_on_its_original_id_and_its_dead_letter_names_the_first() {
    InboundMessage republished =
        new InboundMessage(
            "m-2",
            "payload".getBytes(StandardCharsets.UTF_8),
            Map.of(
                "order_id",
                "po-1",
                "pubsub-worker-message-id",
                "m-1",
                "pubsub-worker-publish-time",
                "2026-11-30T01:00:00Z"),
            "",
            Instant.parse("2026-12-01T03:59:00Z"),
            1);
    assertThat(DeadLetterAttributes.keyMessageId(republished)).isEqualTo("m-1");
    assertThat(MessageKey.messageId().resolve(republished)).contains("m-1");
    assertThat(MessageKey.messageId().withNamespace("orders").resolve(republished))
        .contains("orders:m-1");
    PubsubMessage letter =
        deadLetters.letter(
            republished,
            new DeadLetters.Failure("com.example.Bad", "again", "failed", Outcome.FAILED, null));
    assertThat(letter.getAttributesMap())
        .containsEntry("pubsub-worker-message-id", "m-1")
        .containsEntry("pubsub-worker-publish-time", "2026-11-30T01:00:00Z")
        .containsEntry("CloudPubSubDeadLetterSourceTopicPublishTime", "2026-11-30T01:00:00Z");
    assertThat(DeadLetterAttributes.original(letter).getMessageId()).isEqualTo("m-1");

    // A message without the attribute (or with it empty) is keyed on its own id.
    InboundMessage plain =
        new InboundMessage(
            "m-3",
            new byte[0],
            Map.of("pubsub-worker-message-id", ""),
            "",
            Instant.parse("2026-12-01T03:59:00Z"),
            1);
    assertThat(MessageKey.messageId().resolve(plain)).contains("m-3");
  }

  @Test
  void attributes_the_client_library_adds_on_receipt_are_not_copied_into_the_dead_letter() {
    InboundMessage m =
        new InboundMessage(
            "m-2",
            "payload".getBytes(StandardCharsets.UTF_8),
            Map.of("googclient_deliveryattempt", "4", "googclient_other", "x", "order_id", "po-2"),
            "",
            Instant.parse("2026-12-01T03:59:00Z"),
            4);
    PubsubMessage letter =
        deadLetters.letter(
            m, new DeadLetters.Failure("com.example.Bad", null, "failed", Outcome.FAILED, null));
    assertThat(letter.getAttributesMap())
        .doesNotContainKeys("googclient_deliveryattempt", "googclient_other")
        .containsEntry("order_id", "po-2")
        .containsEntry(DeadLetterAttributes.MESSAGE_ID, "m-2")
        .containsEntry(DeadLetterAttributes.SOURCE_DELIVERY_COUNT, "4");
  }

  @Test
  void pub_sub_forwarding_names_are_set_only_for_what_the_receiver_knows() {
    DeadLetters withoutPath =
        new DeadLetters(
            "orders",
            "orders", // the builder's default: no full path known
            null,
            "worker-7",
            new RepeatLimiter(Duration.ofSeconds(10), Clock.systemUTC()),
            Clock.fixed(NOW, ZoneOffset.UTC));
    InboundMessage m =
        new InboundMessage(
            "m-3",
            new byte[0],
            Map.of(),
            "",
            Instant.parse("2026-12-01T03:59:00Z"),
            0); // no dead-letter policy: Pub/Sub reported no attempt
    PubsubMessage letter =
        withoutPath.letter(
            m, new DeadLetters.Failure("no-key", "no key", "has no key", Outcome.UNKEYED, null));
    assertThat(letter.getAttributesMap())
        .doesNotContainKeys(
            DeadLetterAttributes.SOURCE_SUBSCRIPTION,
            DeadLetterAttributes.SOURCE_SUBSCRIPTION_PROJECT,
            DeadLetterAttributes.SOURCE_DELIVERY_COUNT)
        .containsEntry(DeadLetterAttributes.SOURCE_TOPIC_PUBLISH_TIME, "2026-12-01T03:59:00Z")
        .containsEntry(DeadLetterAttributes.DELIVERY_ATTEMPT, "0")
        .containsEntry(DeadLetterAttributes.MESSAGE_ID, "m-3");
  }

  @Test
  void the_original_is_rebuilt_from_our_dead_letter_with_its_own_id_time_and_attributes() {
    InboundMessage m =
        new InboundMessage(
            "m-4",
            "payload".getBytes(StandardCharsets.UTF_8),
            Map.of("order_id", "po-4", "googclient_deliveryattempt", "2"),
            "customer-4",
            Instant.parse("2026-12-01T03:59:00.5Z"),
            2);
    PubsubMessage letter =
        deadLetters
            .letter(
                m,
                new DeadLetters.Failure("com.example.Bad", "bad", "failed", Outcome.FAILED, null))
            .toBuilder()
            .setMessageId("dl-99") // the dead letter's own, new id
            .build();
    assertThat(DeadLetterAttributes.originalMessageId(letter)).contains("m-4");
    PubsubMessage original = DeadLetterAttributes.original(letter);
    assertThat(original.getMessageId()).isEqualTo("m-4");
    assertThat(original.getAttributesMap()).containsExactlyEntriesOf(Map.of("order_id", "po-4"));
    assertThat(original.getData().toStringUtf8()).isEqualTo("payload");
    assertThat(original.getOrderingKey()).isEqualTo("customer-4");
    assertThat(original.getPublishTime().getSeconds())
        .isEqualTo(Instant.parse("2026-12-01T03:59:00Z").getEpochSecond());
    assertThat(original.getPublishTime().getNanos()).isEqualTo(500_000_000);
  }

  @Test
  void a_letter_pub_sub_forwarded_keeps_its_own_new_id_and_takes_the_source_publish_time() {
    PubsubMessage forwarded =
        PubsubMessage.newBuilder()
            .setMessageId("dl-1")
            .putAttributes("order_id", "po-5")
            .putAttributes("CloudPubSubDeadLetterSourceSubscription", "orders-sub")
            .putAttributes("CloudPubSubDeadLetterSourceSubscriptionProject", "p")
            .putAttributes("CloudPubSubDeadLetterSourceDeliveryCount", "5")
            .putAttributes("CloudPubSubDeadLetterSourceTopicPublishTime", "2026-12-01T03:00:00Z")
            .build();
    assertThat(DeadLetterAttributes.originalMessageId(forwarded)).isEmpty();
    PubsubMessage original = DeadLetterAttributes.original(forwarded);
    assertThat(original.getMessageId()).isEqualTo("dl-1");
    assertThat(original.getAttributesMap()).containsExactlyEntriesOf(Map.of("order_id", "po-5"));
    assertThat(original.getPublishTime().getSeconds())
        .isEqualTo(Instant.parse("2026-12-01T03:00:00Z").getEpochSecond());
  }

  @Test
  void a_long_error_message_is_cut_to_1024_utf8_bytes_without_splitting_a_character() {
    String emoji = "\uD83D\uDCA5"; // 4 bytes in UTF-8
    String text = "é".repeat(300) + emoji.repeat(200); // 600 + 800 bytes
    String cut = DeadLetters.truncateUtf8(text, DeadLetterAttributes.MAX_VALUE_BYTES);
    byte[] bytes = cut.getBytes(StandardCharsets.UTF_8);
    assertThat(bytes.length).isLessThanOrEqualTo(1024);
    assertThat(cut).endsWith("...").startsWith("é".repeat(300));
    assertThat(new String(bytes, StandardCharsets.UTF_8)).isEqualTo(cut);
    assertThat(cut.codePoints().filter(cp -> cp >= 0xD800 && cp <= 0xDFFF)).isEmpty();
    String body = cut.substring(0, cut.length() - 3);
    assertThat(body.substring(600 / 2)).matches("(" + emoji + ")*");
  }

  @Test
  void short_text_is_kept_and_an_unpaired_surrogate_becomes_a_question_mark() {
    assertThat(DeadLetters.truncateUtf8("fine", 1024)).isEqualTo("fine");
    assertThat(DeadLetters.truncateUtf8("a\uD800b", 1024)).isEqualTo("a?b");
    assertThat(DeadLetters.truncateUtf8("x".repeat(2000) + "\uDC00", 1024))
        .hasSize(1024)
        .endsWith("...");
  }

  @Test
  void the_worker_id_is_the_configured_one_or_a_host_name() {
    assertThat(DeadLetters.workerId("pod-a")).isEqualTo("pod-a");
    assertThat(DeadLetters.workerId("")).isNotBlank();
  }
}
