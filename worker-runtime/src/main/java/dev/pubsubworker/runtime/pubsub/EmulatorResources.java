package dev.pubsubworker.runtime.pubsub;

import com.google.api.core.ApiFuture;
import com.google.api.core.InternalApi;
import com.google.api.gax.rpc.ApiException;
import com.google.api.gax.rpc.StatusCode;
import com.google.cloud.pubsub.v1.SubscriptionAdminClient;
import com.google.cloud.pubsub.v1.TopicAdminClient;
import com.google.pubsub.v1.DeadLetterPolicy;
import com.google.pubsub.v1.GetSubscriptionRequest;
import com.google.pubsub.v1.Subscription;
import com.google.pubsub.v1.Topic;
import dev.pubsubworker.runtime.config.SubscriptionConfig;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * Creates on a Pub/Sub emulator (Google's, or the standalone embedded server) the topics and
 * subscriptions a worker config names, so that {@code run} finds them: for each wanted subscription
 * its topic, its dead-letter topic, the subscription itself (with a dead-letter policy on that
 * topic, {@value #MAX_DELIVERY_ATTEMPTS} delivery attempts, Pub/Sub's default), and the dead-letter
 * subscription on the dead-letter topic. Each resource is reported once, in that order, as a {@link
 * Result}.
 *
 * <p>Idempotent: a resource that already exists is {@link State#EXISTS}, and one that exists in
 * another form is {@link State#MISMATCH} and left as it is, never changed: a subscription of
 * another topic, or without the asked-for dead-letter policy, or with one on another topic. An
 * existing subscription that has a dead-letter policy where none is asked for is fine.
 *
 * <p>Only ever talks to an emulator: {@link #create} takes the emulator's {@code host:port} and
 * opens a plaintext channel without credentials to it, so it cannot reach Google Cloud.
 */
@InternalApi("what create-resources runs")
public final class EmulatorResources {

  /** The delivery attempts of a dead-letter policy it creates: Pub/Sub's default. */
  public static final int MAX_DELIVERY_ATTEMPTS = 5;

  private EmulatorResources() {}

  /** What became of one resource. */
  public enum State {
    /** It did not exist and was created. */
    CREATED,
    /** It existed as asked for. */
    EXISTS,
    /** It exists in another form; left as it is. */
    MISMATCH;

    @Override
    public String toString() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /**
   * One resource's outcome.
   *
   * @param kind {@code topic} or {@code subscription}
   * @param path its full path, {@code projects/P/topics/T} or {@code projects/P/subscriptions/S}
   * @param state what became of it
   * @param detail what it is (a subscription's topic and dead-letter policy), or for a mismatch how
   *     it differs; empty for a topic
   */
  public record Result(String kind, String path, State state, String detail) {

    /**
     * The one line the command prints: {@code KIND PATH: STATE[ (DETAIL)]}, or {@code : DETAIL}.
     */
    public String line() {
      String head = kind + " " + path + ": " + state;
      if (detail.isEmpty()) {
        return head;
      }
      return state == State.MISMATCH ? head + ": " + detail : head + " (" + detail + ")";
    }
  }

  /**
   * What to set up for one configured subscription.
   *
   * @param id the subscription's id in the config, for messages
   * @param subscription its full path
   * @param topic the full path of the topic it subscribes to
   * @param deadLetterTopic the full path of its dead-letter topic, if the config names one:
   *     created, and the subscription's dead-letter policy
   * @param deadLetterSubscription the full path of the subscription on the dead-letter topic, if
   *     the config names one; then {@code deadLetterTopic} is present too
   */
  public record Wanted(
      String id,
      String subscription,
      String topic,
      Optional<String> deadLetterTopic,
      Optional<String> deadLetterSubscription) {

    /**
     * @throws IllegalArgumentException if a dead-letter subscription is named without a topic
     */
    public Wanted {
      Objects.requireNonNull(id, "id");
      Objects.requireNonNull(subscription, "subscription");
      Objects.requireNonNull(topic, "topic");
      if (deadLetterSubscription.isPresent() && deadLetterTopic.isEmpty()) {
        throw new IllegalArgumentException(
            "subscription "
                + id
                + ": dead-letter-subscription is set but dead-letter-topic is not, so the topic"
                + " to create it on is unknown; set dead-letter-topic");
      }
    }

    /**
     * What {@code config} asks for, with {@code topic} (its full path) as the subscription's topic.
     * The one place that reads a {@link SubscriptionConfig}: its id, name, dead-letter topic and
     * dead-letter subscription.
     *
     * @throws IllegalArgumentException if it names a dead-letter subscription without a topic
     */
    public static Wanted of(SubscriptionConfig config, String projectId, String topic) {
      return new Wanted(
          config.id(),
          SubscriptionProbe.path(projectId, config.name()),
          topic,
          config.failures().deadLetterTopic(),
          config.failures().deadLetterSubscription());
    }
  }

  /** The emulator cannot be reached, or refused a call for another reason than the resource's. */
  public static final class EmulatorUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    EmulatorUnavailableException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /**
   * Creates what {@code wanted} asks for on the emulator at {@code emulatorHost}, handing each
   * resource's result to {@code report} as it is known, and returns them all. Every call must be
   * answered within {@code timeout} in all.
   *
   * @throws IllegalArgumentException if the emulator refused a name (INVALID_ARGUMENT), with one
   *     line naming the resource
   * @throws EmulatorUnavailableException if it could not be reached within {@code timeout}, or
   *     failed otherwise
   * @throws CancellationException if the thread was interrupted (its flag stays set)
   */
  public static List<Result> create(
      String emulatorHost, List<Wanted> wanted, Duration timeout, Consumer<Result> report) {
    if (emulatorHost.isBlank()) {
      throw new IllegalArgumentException("no emulator host");
    }
    List<Result> results = new ArrayList<>();
    Consumer<Result> record =
        r -> {
          results.add(r);
          report.accept(r);
        };
    try (PubSubConnection connection = PubSubConnection.create(Optional.of(emulatorHost));
        TopicAdminClient topics = TopicAdminClient.create(connection.topicAdminSettings());
        SubscriptionAdminClient subscriptions =
            SubscriptionAdminClient.create(connection.subscriptionAdminSettings())) {
      Calls calls = new Calls(emulatorHost, timeout);
      Set<String> done = new HashSet<>();
      for (Wanted w : wanted) {
        if (done.add(w.topic())) {
          record.accept(topic(topics, calls, w.topic()));
        }
        if (w.deadLetterTopic().isPresent() && done.add(w.deadLetterTopic().get())) {
          record.accept(topic(topics, calls, w.deadLetterTopic().get()));
        }
        if (done.add(w.subscription())) {
          record.accept(
              subscription(
                  subscriptions, calls, w.subscription(), w.topic(), w.deadLetterTopic(), true));
        }
        if (w.deadLetterSubscription().isPresent() && done.add(w.deadLetterSubscription().get())) {
          record.accept(
              subscription(
                  subscriptions,
                  calls,
                  w.deadLetterSubscription().get(),
                  w.deadLetterTopic().orElseThrow(),
                  Optional.empty(),
                  false));
        }
      }
    } catch (IOException e) {
      throw new EmulatorUnavailableException(
          "cannot create an admin client for the Pub/Sub emulator at " + emulatorHost, e);
    }
    return List.copyOf(results);
  }

  private static Result topic(TopicAdminClient admin, Calls calls, String path) {
    try {
      calls.await(
          admin.createTopicCallable().futureCall(Topic.newBuilder().setName(path).build()),
          "topic " + path);
      return new Result("topic", path, State.CREATED, "");
    } catch (ApiException e) {
      if (e.getStatusCode().getCode() == StatusCode.Code.ALREADY_EXISTS) {
        return new Result("topic", path, State.EXISTS, "");
      }
      throw calls.failure("topic " + path, e);
    }
  }

  /**
   * Creates the subscription {@code path} of {@code topic}, with a dead-letter policy on {@code
   * deadLetterTopic} if present; if it exists, compares it. {@code main} says whether it is a
   * configured subscription (its lack of a dead-letter policy is then said), not a dead-letter one.
   */
  private static Result subscription(
      SubscriptionAdminClient admin,
      Calls calls,
      String path,
      String topic,
      Optional<String> deadLetterTopic,
      boolean main) {
    Subscription.Builder asked = Subscription.newBuilder().setName(path).setTopic(topic);
    deadLetterTopic.ifPresent(
        t ->
            asked.setDeadLetterPolicy(
                DeadLetterPolicy.newBuilder()
                    .setDeadLetterTopic(t)
                    .setMaxDeliveryAttempts(MAX_DELIVERY_ATTEMPTS)));
    String what = "subscription " + path;
    Subscription existing;
    try {
      Subscription created =
          calls.await(admin.createSubscriptionCallable().futureCall(asked.build()), what);
      return new Result("subscription", path, State.CREATED, describe(created, main));
    } catch (ApiException e) {
      if (e.getStatusCode().getCode() != StatusCode.Code.ALREADY_EXISTS) {
        throw calls.failure(what, e);
      }
    }
    try {
      existing =
          calls.await(
              admin
                  .getSubscriptionCallable()
                  .futureCall(GetSubscriptionRequest.newBuilder().setSubscription(path).build()),
              what);
    } catch (ApiException e) {
      throw calls.failure(what, e);
    }
    List<String> differences = new ArrayList<>();
    if (!existing.getTopic().equals(topic)) {
      differences.add("its topic is " + existing.getTopic() + ", not " + topic);
    }
    Optional<String> existingDeadLetters = deadLetterTopic(existing);
    if (deadLetterTopic.isPresent() && existingDeadLetters.isEmpty()) {
      differences.add(
          "it has no dead-letter policy, but the config's dead-letter topic is "
              + deadLetterTopic.get());
    } else if (deadLetterTopic.isPresent()
        && !existingDeadLetters.get().equals(deadLetterTopic.get())) {
      differences.add(
          "its dead-letter policy's topic is "
              + existingDeadLetters.get()
              + ", but the config's dead-letter topic is "
              + deadLetterTopic.get());
    }
    if (differences.isEmpty()) {
      return new Result("subscription", path, State.EXISTS, describe(existing, main));
    }
    return new Result(
        "subscription",
        path,
        State.MISMATCH,
        String.join("; ", differences) + "; left as it is (delete it to have it created anew)");
  }

  private static Optional<String> deadLetterTopic(Subscription s) {
    return s.hasDeadLetterPolicy() && !s.getDeadLetterPolicy().getDeadLetterTopic().isEmpty()
        ? Optional.of(s.getDeadLetterPolicy().getDeadLetterTopic())
        : Optional.empty();
  }

  private static String describe(Subscription s, boolean main) {
    String text = "topic " + s.getTopic();
    Optional<String> deadLetters = deadLetterTopic(s);
    if (deadLetters.isPresent()) {
      return text
          + ", dead letters to "
          + deadLetters.get()
          + " after "
          + s.getDeadLetterPolicy().getMaxDeliveryAttempts()
          + " delivery attempts";
    }
    return main ? text + ", no dead-letter policy" : text;
  }

  /** Waits for admin calls within one deadline for them all; an interrupt cancels the call. */
  private static final class Calls {
    private final String host;
    private final Duration timeout;
    private final long deadline;

    Calls(String host, Duration timeout) {
      this.host = host;
      this.timeout = timeout;
      this.deadline = System.nanoTime() + timeout.toNanos();
    }

    <T> T await(ApiFuture<T> call, String what) {
      try {
        return AdminCalls.await(call, deadline);
      } catch (TimeoutException e) {
        throw new EmulatorUnavailableException(
            what
                + ": the Pub/Sub emulator at "
                + host
                + " did not answer within "
                + timeout.toSeconds()
                + "s; is it running?",
            e);
      }
    }

    /** What a call's failure means: a name the emulator refused, or an emulator not usable. */
    RuntimeException failure(String what, ApiException e) {
      StatusCode.Code code = e.getStatusCode().getCode();
      String message = statusText(e);
      if (code == StatusCode.Code.INVALID_ARGUMENT || code == StatusCode.Code.OUT_OF_RANGE) {
        return new IllegalArgumentException(
            what + ": refused by the Pub/Sub emulator: " + code + message, e);
      }
      boolean unreachable =
          code == StatusCode.Code.UNAVAILABLE || code == StatusCode.Code.DEADLINE_EXCEEDED;
      return new EmulatorUnavailableException(
          what
              + ": "
              + code
              + message
              + (unreachable ? " from the Pub/Sub emulator at " + host + "; is it running?" : ""),
          e);
    }

    /** The status's own text, as {@code " (TEXT)"}, without gax's exception-class prefix. */
    private static String statusText(ApiException e) {
      String text = AdminCalls.statusText(e);
      return text.isEmpty() ? "" : " (" + text + ")";
    }
  }
}
