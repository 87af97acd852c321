package dev.pubsubworker.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.FieldMask;
import com.google.pubsub.v1.DeadLetterPolicy;
import com.google.pubsub.v1.RetryPolicy;
import com.google.pubsub.v1.Subscription;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Update masks, flat and nested, applied the way Pub/Sub's Update RPCs apply them. */
class FieldMasksTest {

  private static final Set<String> IMMUTABLE = Set.of("name", "topic");

  private static final Subscription CURRENT =
      Subscription.newBuilder()
          .setName("projects/p/subscriptions/s")
          .setTopic("projects/p/topics/t")
          .setAckDeadlineSeconds(10)
          .putLabels("team", "orders")
          .setDeadLetterPolicy(
              DeadLetterPolicy.newBuilder()
                  .setDeadLetterTopic("projects/p/topics/dl")
                  .setMaxDeliveryAttempts(5))
          .setRetryPolicy(
              RetryPolicy.newBuilder()
                  .setMinimumBackoff(PubSubScenarios.seconds(10))
                  .setMaximumBackoff(PubSubScenarios.seconds(600)))
          .build();

  private static Subscription apply(Subscription update, String... paths) {
    return FieldMasks.apply(
        CURRENT,
        update,
        FieldMask.newBuilder().addAllPaths(java.util.List.of(paths)).build(),
        "UpdateSubscriptionRequest",
        IMMUTABLE);
  }

  @Test
  void a_top_level_path_takes_the_whole_field_from_the_update() {
    Subscription updated =
        apply(
            Subscription.newBuilder()
                .setAckDeadlineSeconds(42)
                .setDeadLetterPolicy(DeadLetterPolicy.newBuilder().setMaxDeliveryAttempts(7))
                .build(),
            "ack_deadline_seconds",
            "dead_letter_policy");

    assertThat(updated.getAckDeadlineSeconds()).isEqualTo(42);
    assertThat(updated.getDeadLetterPolicy())
        .as("the whole policy is replaced")
        .isEqualTo(DeadLetterPolicy.newBuilder().setMaxDeliveryAttempts(7).build());
    assertThat(updated.getLabelsMap()).containsEntry("team", "orders");
  }

  @Test
  void a_nested_path_changes_one_field_and_keeps_its_siblings() {
    Subscription updated =
        apply(
            Subscription.newBuilder()
                .setDeadLetterPolicy(DeadLetterPolicy.newBuilder().setMaxDeliveryAttempts(20))
                .setRetryPolicy(
                    RetryPolicy.newBuilder().setMaximumBackoff(PubSubScenarios.seconds(60)))
                .build(),
            "dead_letter_policy.max_delivery_attempts",
            "retry_policy.maximum_backoff");

    assertThat(updated.getDeadLetterPolicy().getMaxDeliveryAttempts()).isEqualTo(20);
    assertThat(updated.getDeadLetterPolicy().getDeadLetterTopic())
        .isEqualTo("projects/p/topics/dl");
    assertThat(updated.getRetryPolicy().getMinimumBackoff()).isEqualTo(PubSubScenarios.seconds(10));
    assertThat(updated.getRetryPolicy().getMaximumBackoff()).isEqualTo(PubSubScenarios.seconds(60));
  }

  @Test
  void a_named_field_left_unset_in_the_update_is_cleared() {
    Subscription updated =
        apply(Subscription.getDefaultInstance(), "retry_policy.minimum_backoff", "labels");

    assertThat(updated.getRetryPolicy().hasMinimumBackoff()).isFalse();
    assertThat(updated.getRetryPolicy().hasMaximumBackoff()).isTrue();
    assertThat(updated.getLabelsMap()).isEmpty();

    Subscription withoutPolicy = apply(Subscription.getDefaultInstance(), "dead_letter_policy");
    assertThat(withoutPolicy.hasDeadLetterPolicy()).isFalse();
  }

  @Test
  void a_nested_path_into_an_unset_policy_creates_it() {
    Subscription current = CURRENT.toBuilder().clearRetryPolicy().build();

    Subscription updated =
        FieldMasks.apply(
            current,
            Subscription.newBuilder()
                .setRetryPolicy(
                    RetryPolicy.newBuilder().setMinimumBackoff(PubSubScenarios.seconds(3)))
                .build(),
            FieldMask.newBuilder().addPaths("retry_policy.minimum_backoff").build(),
            "UpdateSubscriptionRequest",
            IMMUTABLE);

    assertThat(updated.getRetryPolicy().getMinimumBackoff()).isEqualTo(PubSubScenarios.seconds(3));
  }

  @Test
  void paths_that_name_no_field_are_refused_naming_the_path() {
    for (String path :
        new String[] {
          "bogus", "retry_policy.bogus", "ack_deadline_seconds.x", "labels.team", "retryPolicy", ""
        }) {
      assertThatThrownBy(() -> apply(Subscription.getDefaultInstance(), path))
          .as(path)
          .hasMessage(
              "INVALID_ARGUMENT: Invalid update_mask provided in the UpdateSubscriptionRequest: "
                  + path
                  + " is not a known Subscription field. Note that field paths must be of the form"
                  + " 'push_config' rather than 'pushConfig'.");
    }
  }

  @Test
  void immutable_fields_and_empty_masks_are_refused() {
    assertThatThrownBy(() -> apply(Subscription.getDefaultInstance(), "topic"))
        .hasMessageEndingWith("the 'topic' field cannot be updated");
    assertThatThrownBy(() -> apply(Subscription.getDefaultInstance(), "name.x"))
        .hasMessageEndingWith("the 'name' field cannot be updated");
    assertThatThrownBy(() -> apply(Subscription.getDefaultInstance()))
        .hasMessageEndingWith("update_mask must name at least one field to update");
  }
}
