package dev.pubsubworker.embedded;

import com.google.protobuf.FieldMask;
import com.google.protobuf.Timestamp;
import com.google.pubsub.v1.CommitSchemaRequest;
import com.google.pubsub.v1.CreateSchemaRequest;
import com.google.pubsub.v1.CreateSnapshotRequest;
import com.google.pubsub.v1.DeleteSchemaRevisionRequest;
import com.google.pubsub.v1.GetSchemaRequest;
import com.google.pubsub.v1.ListSchemaRevisionsRequest;
import com.google.pubsub.v1.ListSchemasRequest;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.ReceivedMessage;
import com.google.pubsub.v1.RollbackSchemaRequest;
import com.google.pubsub.v1.Schema;
import com.google.pubsub.v1.Snapshot;
import com.google.pubsub.v1.StreamingPullRequest;
import com.google.pubsub.v1.StreamingPullResponse;
import com.google.pubsub.v1.StreamingPullResponse.AcknowledgeConfirmation;
import com.google.pubsub.v1.StreamingPullResponse.ModifyAckDeadlineConfirmation;
import com.google.pubsub.v1.Subscription;
import com.google.pubsub.v1.Topic;
import com.google.pubsub.v1.ValidateMessageRequest;
import com.google.pubsub.v1.ValidateSchemaRequest;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ServerCallStreamObserver;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;

/**
 * The server's state: topics, subscriptions and their messages, under one lock. The gRPC services
 * translate requests into calls here; {@link #tick()} judges deadlines and backoffs against the
 * clock.
 */
final class Broker {

  /** Name a subscription's topic takes when the topic is deleted, as on Pub/Sub. */
  static final String DELETED_TOPIC = "_deleted-topic_";

  /** Reason of the ErrorInfo detail for failed exactly-once acks, as the service sends it. */
  static final String EXACTLY_ONCE_FAILURE_REASON = "EXACTLY_ONCE_ACKID_FAILURE";

  static final String INVALID_ACK_ID = "PERMANENT_FAILURE_INVALID_ACK_ID";

  private static final int MAX_MESSAGES_PER_RESPONSE = 500;
  private static final long MAX_RESPONSE_BYTES = Validation.MAX_PUBLISH_REQUEST_BYTES;

  /** The outcome of an ack or modack request: a failed RPC, or per-ack-id failures. */
  record AckOutcome(Status failure, Map<String, String> failedAckIds) {
    static final AckOutcome OK = new AckOutcome(null, Map.of());
  }

  private record DelayedAck(
      Instant due, String subscription, List<String> ackIds, Consumer<AckOutcome> reply) {}

  private final Clock clock;
  private final Faults faults = new Faults(this);
  private final NavigableMap<String, Topic> topics = new TreeMap<>();
  private final Map<String, Set<String>> topicSubscriptions = new TreeMap<>();
  private final NavigableMap<String, SubscriptionState> subscriptions = new TreeMap<>();
  private final List<DelayedAck> delayedAcks = new ArrayList<>();
  private final Schemas schemas;
  private final Snapshots snapshots = new Snapshots();

  /** Per topic with a message_retention_duration: its messages of that last duration. */
  private final Map<String, ArrayDeque<PubsubMessage>> topicRetained = new TreeMap<>();

  private long nextMessageId = 1;
  private long nextSequence = 1;
  private boolean closed;

  Broker(Clock clock) {
    this.clock = clock;
    this.schemas = new Schemas(clock);
  }

  Faults faults() {
    return faults;
  }

  Clock clock() {
    return clock;
  }

  // ---- topics ----

  synchronized Topic createTopic(Topic topic) {
    String name = Names.check(topic.getName(), "topics");
    checkTopic(topic);
    if (topics.containsKey(name)) {
      throw alreadyExists(name);
    }
    topics.put(name, topic);
    topicSubscriptions.put(name, new LinkedHashSet<>());
    return topic;
  }

  synchronized Topic getTopic(String name) {
    return requireTopic(name);
  }

  synchronized Topic updateTopic(Topic update, FieldMask mask) {
    Topic current = requireTopic(update.getName());
    Topic result = FieldMasks.apply(current, update, mask, "UpdateTopicRequest", Set.of("name"));
    // Settings naming a deleted schema fail here as on the emulator (NOT_FOUND), whatever the mask
    // names: the way out is an update of schema_settings itself.
    checkTopic(result);
    topics.put(result.getName(), result);
    return result;
  }

  /** Checks a topic's retention (10 minutes to 31 days) and its schema settings. */
  private void checkTopic(Topic topic) {
    if (topic.hasMessageRetentionDuration()) {
      Validation.checkRetention(topic.getMessageRetentionDuration());
    }
    if (topic.hasSchemaSettings()) {
      schemas.checkSettings(topic.getSchemaSettings());
    }
  }

  synchronized List<Topic> listTopics(String project) {
    Names.checkProject(project);
    String prefix = project + "/topics/";
    return new ArrayList<>(topics.subMap(prefix, prefix + Character.MAX_VALUE).values());
  }

  synchronized List<String> listTopicSubscriptions(String topic) {
    requireTopic(topic);
    return new ArrayList<>(topicSubscriptions.get(topic));
  }

  synchronized void deleteTopic(String name) {
    requireTopic(name);
    topics.remove(name);
    topicRetained.remove(name);
    snapshots.topicDeleted(name);
    for (String subscription : topicSubscriptions.remove(name)) {
      SubscriptionState state = subscriptions.get(subscription);
      if (state != null) {
        state.updateConfig(state.config().toBuilder().setTopic(DELETED_TOPIC).build());
      }
    }
  }

  /** A client's Publish: Pub/Sub's request limits, then {@link #store}. */
  synchronized List<String> publish(String topicName, List<PubsubMessage> messages) {
    Topic topic = requireTopic(topicName);
    Validation.checkPublish(messages);
    return store(topic, messages);
  }

  /**
   * Validates messages against the topic's schema, gives them ids and publish times, and hands them
   * to the topic's subscriptions and snapshots.
   */
  private List<String> store(Topic topic, List<PubsubMessage> messages) {
    String topicName = topic.getName();
    if (topic.hasSchemaSettings()) {
      List<PubsubMessage> validated = new ArrayList<>(messages.size());
      for (PubsubMessage message : messages) {
        validated.add(schemas.validatePublished(topic.getSchemaSettings(), message));
      }
      messages = validated;
    }
    Instant now = clock.instant();
    Timestamp publishTime =
        Timestamp.newBuilder().setSeconds(now.getEpochSecond()).setNanos(now.getNano()).build();
    List<String> ids = new ArrayList<>(messages.size());
    for (PubsubMessage message : messages) {
      String id = Long.toString(nextMessageId++);
      ids.add(id);
      PubsubMessage stored =
          message.toBuilder().setMessageId(id).setPublishTime(publishTime).build();
      snapshots.published(topicName, stored);
      if (topic.hasMessageRetentionDuration()) {
        topicRetained.computeIfAbsent(topicName, t -> new ArrayDeque<>()).add(stored);
      }
      for (String subscription : topicSubscriptions.get(topicName)) {
        SubscriptionState state = subscriptions.get(subscription);
        if (state != null) {
          state.enqueue(new QueuedMessage(stored, nextSequence++, now));
        }
      }
    }
    for (String subscription : topicSubscriptions.get(topicName)) {
      SubscriptionState state = subscriptions.get(subscription);
      if (state != null) {
        deliver(state, now);
      }
    }
    return ids;
  }

  // ---- subscriptions ----

  synchronized Subscription createSubscription(Subscription request) {
    String name = Names.check(request.getName(), "subscriptions");
    Names.check(request.getTopic(), "topics");
    Subscription subscription = SubscriptionConfigs.forCreate(request);
    if (!topics.containsKey(request.getTopic())) {
      throw notFound(request.getTopic());
    }
    if (subscriptions.containsKey(name)) {
      throw alreadyExists(name);
    }
    if (subscription.hasDeadLetterPolicy()
        && !topics.containsKey(subscription.getDeadLetterPolicy().getDeadLetterTopic())) {
      throw Status.NOT_FOUND.withDescription("Dead letter topic not found").asRuntimeException();
    }
    subscriptions.put(name, new SubscriptionState(subscription, this::publishDeadLetter));
    topicSubscriptions.get(request.getTopic()).add(name);
    return withTopicRetention(subscription);
  }

  /** The subscription as the API shows it: with its topic's retention, when the topic has one. */
  private Subscription withTopicRetention(Subscription subscription) {
    Topic topic = topics.get(subscription.getTopic());
    if (topic == null || !topic.hasMessageRetentionDuration()) {
      return subscription;
    }
    return subscription.toBuilder()
        .setTopicMessageRetentionDuration(topic.getMessageRetentionDuration())
        .build();
  }

  /**
   * Forwards a message to a dead-letter topic. The server's own publish: the client's request
   * limits do not apply (the dead-letter attributes may take a message past 100), its schema does.
   */
  private void publishDeadLetter(String topic, PubsubMessage message) {
    store(requireTopic(topic), List.of(message));
  }

  synchronized Subscription getSubscription(String name) {
    return withTopicRetention(requireSubscription(name).config());
  }

  synchronized Subscription updateSubscription(Subscription update, FieldMask mask) {
    SubscriptionState state = requireSubscription(update.getName());
    Subscription result = SubscriptionConfigs.forUpdate(state.config(), update, mask);
    state.updateConfig(result);
    return withTopicRetention(result);
  }

  synchronized List<Subscription> listSubscriptions(String project) {
    Names.checkProject(project);
    String prefix = project + "/subscriptions/";
    List<Subscription> result = new ArrayList<>();
    for (SubscriptionState state :
        subscriptions.subMap(prefix, prefix + Character.MAX_VALUE).values()) {
      result.add(withTopicRetention(state.config()));
    }
    return result;
  }

  synchronized void deleteSubscription(String name) {
    SubscriptionState state = requireSubscription(name);
    subscriptions.remove(name);
    Set<String> siblings = topicSubscriptions.get(state.config().getTopic());
    if (siblings != null) {
      siblings.remove(name);
    }
    state.closeStreams(Status.NOT_FOUND.withDescription("Subscription does not exist"));
  }

  /**
   * Seeks to a time: the messages the subscription retains become acked when published before it,
   * unacked from it on. When the topic has a message_retention_duration, the messages the topic
   * retains from that time on become unacked too, even those acked without retain_acked_messages or
   * published before the subscription was created, as on Pub/Sub.
   */
  synchronized void seek(String name, Instant time) {
    SubscriptionState state = requireSubscription(name);
    Instant now = clock.instant();
    List<PubsubMessage> topicMessages = topicRetained(state.config().getTopic(), now);
    if (topicMessages.isEmpty()) {
      state.seek(time);
    } else {
      Map<String, PubsubMessage> reached = new LinkedHashMap<>();
      for (QueuedMessage message : state.heldMessages()) {
        reached.put(message.message.getMessageId(), message.message);
      }
      for (PubsubMessage message : topicMessages) {
        reached.putIfAbsent(message.getMessageId(), message);
      }
      List<PubsubMessage> sorted = new ArrayList<>();
      for (PubsubMessage message : reached.values()) {
        if (!Snapshots.instant(message.getPublishTime()).isBefore(time)) {
          sorted.add(message);
        }
      }
      sorted.sort(
          Comparator.comparing((PubsubMessage m) -> Snapshots.instant(m.getPublishTime()))
              .thenComparingLong(m -> Long.parseLong(m.getMessageId())));
      state.seekToBacklog(queued(sorted));
    }
    deliver(state, now);
  }

  /** New subscription entries for published messages, in the given order. */
  private List<QueuedMessage> queued(List<PubsubMessage> messages) {
    List<QueuedMessage> queued = new ArrayList<>(messages.size());
    for (PubsubMessage message : messages) {
      queued.add(
          new QueuedMessage(message, nextSequence++, Snapshots.instant(message.getPublishTime())));
    }
    return queued;
  }

  /** The messages {@code topic} retains now (none without a message_retention_duration). */
  private List<PubsubMessage> topicRetained(String topicName, Instant now) {
    Topic topic = topics.get(topicName);
    ArrayDeque<PubsubMessage> retained = topicRetained.get(topicName);
    if (topic == null || retained == null) {
      return List.of();
    }
    if (!topic.hasMessageRetentionDuration()) {
      topicRetained.remove(topicName);
      return List.of();
    }
    Instant oldest = now.minus(Validation.toDuration(topic.getMessageRetentionDuration()));
    while (!retained.isEmpty()
        && Snapshots.instant(retained.peekFirst().getPublishTime()).isBefore(oldest)) {
      retained.pollFirst();
    }
    return new ArrayList<>(retained);
  }

  // ---- pulling, acking ----

  synchronized List<ReceivedMessage> pull(String name, int maxMessages) {
    if (maxMessages <= 0) {
      throw Validation.invalid("max_messages must be > 0, but was " + maxMessages);
    }
    SubscriptionState state = requireSubscription(name);
    Instant now = clock.instant();
    state.advanceTo(now);
    List<ReceivedMessage> received = new ArrayList<>();
    if (faults.deliveryPaused(state.id())) {
      return received;
    }
    int seconds = state.config().getAckDeadlineSeconds();
    long bytes = 0;
    while (received.size() < maxMessages) {
      QueuedMessage message = state.nextReady(null);
      if (message == null) {
        break;
      }
      if (bytes > 0 && bytes + message.bytes > MAX_RESPONSE_BYTES) {
        state.putBack(message);
        break;
      }
      bytes += message.bytes;
      received.add(state.lease(message, null, seconds, now));
      if (faults.takeDuplicate(state.id())) {
        received.add(state.lease(message, null, seconds, now));
      }
    }
    return received;
  }

  /**
   * Acknowledges {@code ackIds}; {@code reply} receives the outcome, at once or (with an ack delay
   * fault) at a later tick.
   */
  synchronized void acknowledge(String name, List<String> ackIds, Consumer<AckOutcome> reply) {
    SubscriptionState state = requireSubscription(name);
    checkAckIds(state, ackIds);
    Status.Code failure = faults.ackFailure(state.id());
    if (failure != null) {
      reply.accept(
          new AckOutcome(
              Status.fromCode(failure).withDescription("injected ack failure (Faults.failAcks)"),
              Map.of()));
      return;
    }
    if (faults.acksDropped(state.id())) {
      reply.accept(AckOutcome.OK);
      return;
    }
    Duration delay = faults.ackDelay(state.id());
    if (delay != null) {
      delayedAcks.add(new DelayedAck(clock.instant().plus(delay), name, ackIds, reply));
      return;
    }
    reply.accept(applyAcks(state, ackIds, clock.instant()));
  }

  /**
   * Refuses ack ids this server never handed out for the subscription, as the emulator does.
   *
   * @throws StatusRuntimeException INVALID_ARGUMENT "Invalid ack id (ack_id=...)"
   */
  private static void checkAckIds(SubscriptionState state, List<String> ackIds) {
    for (String ackId : ackIds) {
      if (!state.isWellFormed(ackId)) {
        throw Validation.invalid("Invalid ack id (ack_id=" + ackId + ")");
      }
    }
  }

  private AckOutcome applyAcks(SubscriptionState state, List<String> ackIds, Instant now) {
    state.advanceTo(now);
    Map<String, String> failed = new LinkedHashMap<>();
    for (String ackId : ackIds) {
      if (state.exactlyOnce() && !state.isValid(ackId, now)) {
        failed.put(ackId, INVALID_ACK_ID);
      } else {
        state.ack(ackId);
      }
    }
    deliver(state, now);
    return failed.isEmpty() ? AckOutcome.OK : new AckOutcome(null, failed);
  }

  /** Modifies the deadlines of {@code ackIds} (0 = nack). */
  synchronized AckOutcome modifyAckDeadline(String name, List<String> ackIds, int seconds) {
    if (seconds < 0 || seconds > Validation.MAX_ACK_DEADLINE_SECONDS) {
      throw Validation.invalid(
          "Invalid ack deadline given: ack_deadline_seconds must be between 0 and 600, but was "
              + seconds);
    }
    SubscriptionState state = requireSubscription(name);
    checkAckIds(state, ackIds);
    return applyModacks(state, ackIds, List.of(seconds), clock.instant());
  }

  private AckOutcome applyModacks(
      SubscriptionState state, List<String> ackIds, List<Integer> seconds, Instant now) {
    state.advanceTo(now);
    Map<String, String> failed = new LinkedHashMap<>();
    for (int i = 0; i < ackIds.size(); i++) {
      String ackId = ackIds.get(i);
      int deadline = seconds.size() == 1 ? seconds.get(0) : seconds.get(i);
      if (state.exactlyOnce() && !state.isValid(ackId, now)) {
        failed.put(ackId, INVALID_ACK_ID);
      } else {
        state.modifyDeadline(ackId, deadline, now);
      }
    }
    deliver(state, now);
    return failed.isEmpty() ? AckOutcome.OK : new AckOutcome(null, failed);
  }

  // ---- streaming pull ----

  synchronized PullStream openStream(
      StreamingPullRequest first, ServerCallStreamObserver<StreamingPullResponse> observer) {
    if (closed) {
      throw Status.UNAVAILABLE
          .withDescription("the embedded Pub/Sub server is shutting down")
          .asRuntimeException();
    }
    if (first.getSubscription().isEmpty()) {
      throw Validation.invalid("The first StreamingPullRequest must name a subscription");
    }
    SubscriptionState state = requireSubscription(first.getSubscription());
    int seconds = first.getStreamAckDeadlineSeconds();
    checkStreamDeadline(seconds);
    PullStream stream =
        new PullStream(
            state,
            observer,
            seconds,
            first.getMaxOutstandingMessages(),
            first.getMaxOutstandingBytes(),
            clock.instant());
    state.streams.add(stream);
    try {
      handle(stream, first);
    } catch (StatusRuntimeException e) {
      state.streams.remove(stream);
      stream.open = false;
      throw e;
    }
    return stream;
  }

  private static void checkStreamDeadline(int seconds) {
    if (seconds < Validation.MIN_ACK_DEADLINE_SECONDS
        || seconds > Validation.MAX_ACK_DEADLINE_SECONDS) {
      throw Validation.invalid(
          "Invalid stream_ack_deadline_seconds: must be between 10 and 600, but was " + seconds);
    }
  }

  /** Applies a request received on an open stream (acks, modacks, deadline change). */
  synchronized void handle(PullStream stream, StreamingPullRequest request) {
    if (!stream.open) {
      return;
    }
    SubscriptionState state = stream.subscription;
    if (subscriptions.get(state.name()) != state) {
      return;
    }
    if (request.getStreamAckDeadlineSeconds() != 0
        && request.getStreamAckDeadlineSeconds() != stream.ackDeadlineSeconds) {
      checkStreamDeadline(request.getStreamAckDeadlineSeconds());
      stream.ackDeadlineSeconds = request.getStreamAckDeadlineSeconds();
    }
    if (request.getModifyDeadlineAckIdsCount() != request.getModifyDeadlineSecondsCount()) {
      throw Validation.invalid(
          "modify_deadline_ack_ids and modify_deadline_seconds must have the same length");
    }
    Instant now = clock.instant();
    if (request.getAckIdsCount() > 0) {
      List<String> ackIds = request.getAckIdsList();
      acknowledge(state.name(), ackIds, outcome -> confirmAcks(stream, ackIds, outcome));
    }
    if (request.getModifyDeadlineAckIdsCount() > 0) {
      for (int seconds : request.getModifyDeadlineSecondsList()) {
        if (seconds < 0 || seconds > Validation.MAX_ACK_DEADLINE_SECONDS) {
          throw Validation.invalid(
              "Invalid modify_deadline_seconds: must be between 0 and 600, but was " + seconds);
        }
      }
      List<String> ackIds = request.getModifyDeadlineAckIdsList();
      checkAckIds(state, ackIds);
      AckOutcome outcome = applyModacks(state, ackIds, request.getModifyDeadlineSecondsList(), now);
      if (state.exactlyOnce()) {
        send(
            stream,
            StreamingPullResponse.newBuilder()
                .setModifyAckDeadlineConfirmation(
                    ModifyAckDeadlineConfirmation.newBuilder()
                        .addAllAckIds(succeeded(ackIds, outcome))
                        .addAllInvalidAckIds(outcome.failedAckIds().keySet())));
      }
    }
    deliver(state, now);
  }

  /** Sends an exactly-once ack confirmation; may come from a tick, hence its own lock. */
  private synchronized void confirmAcks(
      PullStream stream, List<String> ackIds, AckOutcome outcome) {
    if (!stream.subscription.exactlyOnce()) {
      return;
    }
    AcknowledgeConfirmation.Builder confirmation = AcknowledgeConfirmation.newBuilder();
    if (outcome.failure() != null) {
      confirmation.addAllTemporaryFailedAckIds(ackIds);
    } else {
      confirmation
          .addAllAckIds(succeeded(ackIds, outcome))
          .addAllInvalidAckIds(outcome.failedAckIds().keySet());
    }
    send(stream, StreamingPullResponse.newBuilder().setAcknowledgeConfirmation(confirmation));
  }

  private static List<String> succeeded(List<String> ackIds, AckOutcome outcome) {
    List<String> ok = new ArrayList<>();
    for (String ackId : ackIds) {
      if (!outcome.failedAckIds().containsKey(ackId)) {
        ok.add(ackId);
      }
    }
    return ok;
  }

  private void send(PullStream stream, StreamingPullResponse.Builder response) {
    if (!stream.open) {
      return;
    }
    response.setSubscriptionProperties(properties(stream.subscription));
    try {
      stream.observer.onNext(response.build());
    } catch (RuntimeException cancelled) {
      // The client went away meanwhile; onCancel removes the stream.
      stream.open = false;
    }
  }

  private static StreamingPullResponse.SubscriptionProperties properties(SubscriptionState state) {
    return StreamingPullResponse.SubscriptionProperties.newBuilder()
        .setExactlyOnceDeliveryEnabled(state.exactlyOnce())
        .setMessageOrderingEnabled(state.config().getEnableMessageOrdering())
        .build();
  }

  /** Forgets a stream that the client ended or cancelled; its leases stay until their deadlines. */
  synchronized void closeStream(PullStream stream, Status status) {
    stream.subscription.streams.remove(stream);
    stream.close(status);
  }

  synchronized void streamReady(PullStream stream) {
    if (stream.open) {
      deliver(stream.subscription, clock.instant());
    }
  }

  /**
   * How many StreamingPull streams are open on {@code subscription}: a full name, or an id that
   * counts the streams of that id in every project.
   */
  synchronized int openStreams(String subscription) {
    boolean fullName = subscription.contains("/subscriptions/");
    int open = 0;
    for (SubscriptionState state : subscriptions.values()) {
      if (fullName ? state.name().equals(subscription) : state.id().equals(subscription)) {
        open += (int) state.streams.stream().filter(stream -> stream.open).count();
      }
    }
    return open;
  }

  synchronized int resetStreams(String subscriptionId) {
    int reset = 0;
    for (SubscriptionState state : subscriptions.values()) {
      if (state.id().equals(subscriptionId)) {
        reset +=
            state.closeStreams(
                Status.UNAVAILABLE.withDescription("stream reset (Faults.resetStreams)"));
      }
    }
    return reset;
  }

  /** Sends ready messages to every stream that can take them. */
  synchronized void deliverAll() {
    Instant now = clock.instant();
    for (SubscriptionState state : subscriptions.values()) {
      deliver(state, now);
    }
  }

  /** The response being filled for one stream during a {@link #deliver} pass. */
  private static final class Batch {
    final StreamingPullResponse.Builder response = StreamingPullResponse.newBuilder();
    long bytes;

    /** Whether {@code message} must go in the next response (500 messages or 10 MB each). */
    boolean isFullFor(QueuedMessage message) {
      int count = response.getReceivedMessagesCount();
      return count >= MAX_MESSAGES_PER_RESPONSE
          || (count > 0 && bytes + message.bytes > MAX_RESPONSE_BYTES);
    }

    void add(ReceivedMessage received, long size) {
      response.addReceivedMessages(received);
      bytes += size;
    }
  }

  /**
   * Deals the subscription's ready messages to its open streams, one message at a time to the
   * stream {@link SubscriptionState#nextStream} names, until no stream has room or none may take
   * what is left; then sends each stream its messages. Streams whose transport is not ready are
   * left out; they are served when it is ({@link #streamReady}).
   */
  private void deliver(SubscriptionState state, Instant now) {
    if (state.streams.isEmpty() || faults.deliveryPaused(state.id())) {
      return;
    }
    state.advanceTo(now);
    state.streams.removeIf(stream -> !stream.open);
    Set<PullStream> leftOut = new HashSet<>();
    for (PullStream stream : state.streams) {
      if (!stream.observer.isReady()) {
        leftOut.add(stream);
      }
    }
    Map<PullStream, Batch> batches = new LinkedHashMap<>();
    for (PullStream stream = state.nextStream(now, leftOut);
        stream != null;
        stream = state.nextStream(now, leftOut)) {
      QueuedMessage message = state.nextReady(stream);
      if (message == null) {
        // Nothing left that this stream may take (the rest belongs to other streams' keys).
        leftOut.add(stream);
        continue;
      }
      Batch batch = batches.computeIfAbsent(stream, s -> new Batch());
      if (batch.isFullFor(message)) {
        send(stream, batch.response);
        batch = new Batch();
        batches.put(stream, batch);
        if (!stream.open || !stream.observer.isReady()) {
          state.putBack(message);
          leftOut.add(stream);
          continue;
        }
      }
      batch.add(state.lease(message, stream, stream.ackDeadlineSeconds, now), message.bytes);
      if (faults.takeDuplicate(state.id())) {
        batch.add(state.lease(message, stream, stream.ackDeadlineSeconds, now), message.bytes);
      }
    }
    for (Map.Entry<PullStream, Batch> batch : batches.entrySet()) {
      if (batch.getValue().response.getReceivedMessagesCount() > 0) {
        send(batch.getKey(), batch.getValue().response);
      }
    }
  }

  synchronized boolean hasDelayedAcks() {
    return !delayedAcks.isEmpty();
  }

  // ---- time ----

  /** Applies due delayed acks, expires due leases, ends due backoffs and delivers. */
  void tick() {
    List<Runnable> replies = new ArrayList<>();
    synchronized (this) {
      Instant now = clock.instant();
      for (Iterator<DelayedAck> it = delayedAcks.iterator(); it.hasNext(); ) {
        DelayedAck ack = it.next();
        if (ack.due().isAfter(now)) {
          continue;
        }
        it.remove();
        SubscriptionState state = subscriptions.get(ack.subscription());
        AckOutcome outcome =
            state == null
                ? new AckOutcome(
                    Status.NOT_FOUND.withDescription("Subscription does not exist"), Map.of())
                : applyAcks(state, ack.ackIds(), now);
        replies.add(() -> ack.reply().accept(outcome));
      }
      for (SubscriptionState state : subscriptions.values()) {
        state.advanceTo(now);
        deliver(state, now);
      }
    }
    replies.forEach(Runnable::run);
  }

  /** Ends every stream and refuses new ones; pending delayed acks fail with UNAVAILABLE. */
  synchronized void close() {
    closed = true;
    Status unavailable =
        Status.UNAVAILABLE.withDescription("the embedded Pub/Sub server is shutting down");
    for (SubscriptionState state : subscriptions.values()) {
      state.closeStreams(unavailable);
    }
    for (DelayedAck ack : delayedAcks) {
      ack.reply().accept(new AckOutcome(unavailable, Map.of()));
    }
    delayedAcks.clear();
  }

  // ---- snapshots ----

  synchronized Snapshot createSnapshot(CreateSnapshotRequest request) {
    SubscriptionState state = requireSubscription(request.getSubscription());
    String topic = state.config().getTopic();
    if (topic.equals(DELETED_TOPIC)) {
      throw Status.FAILED_PRECONDITION
          .withDescription(
              "The subscription's topic has been deleted: there is nothing to snapshot")
          .asRuntimeException();
    }
    List<PubsubMessage> backlog = new ArrayList<>();
    for (QueuedMessage message : state.unackedMessages()) {
      backlog.add(message.message);
    }
    return snapshots.create(
        request.getName(),
        Names.parent(request.getSubscription()),
        topic,
        backlog,
        request.getLabelsMap(),
        clock.instant());
  }

  synchronized Snapshot getSnapshot(String name) {
    return snapshots.get(name, clock.instant());
  }

  synchronized List<Snapshot> listSnapshots(String project) {
    return snapshots.list(project, clock.instant());
  }

  synchronized List<String> listTopicSnapshots(String topic) {
    requireTopic(topic);
    return snapshots.listForTopic(topic, clock.instant());
  }

  synchronized Snapshot updateSnapshot(Snapshot update, FieldMask mask) {
    return snapshots.update(update, mask, clock.instant());
  }

  synchronized void deleteSnapshot(String name) {
    snapshots.delete(name, clock.instant());
  }

  /**
   * Seeks a subscription to a snapshot of its topic: the snapshot's messages become its unacked
   * backlog, every other message acked; every outstanding lease ends.
   *
   * @throws StatusRuntimeException FAILED_PRECONDITION (the emulator's text) when the snapshot was
   *     taken on another topic, or on a topic deleted since
   */
  synchronized void seekToSnapshot(String subscription, String snapshotName) {
    SubscriptionState state = requireSubscription(subscription);
    Instant now = clock.instant();
    Snapshots.Entry snapshot = snapshots.require(snapshotName, now);
    String topic = state.config().getTopic();
    if (snapshot.topicDeleted || !snapshot.snapshot.getTopic().equals(topic)) {
      throw Status.FAILED_PRECONDITION
          .withDescription(
              "The subscription's topic "
                  + topic
                  + " is different from that of the snapshot "
                  + snapshot.snapshot.getTopic()
                  + "; they must match in order for Seek work. Note that if a topic is deleted and"
                  + " then re-created with the same name, it is considered a distinct topic for"
                  + " these purposes.")
          .asRuntimeException();
    }
    state.seekToBacklog(queued(snapshot.messages));
    deliver(state, now);
  }

  // ---- schemas ----

  synchronized Schema createSchema(CreateSchemaRequest request) {
    return schemas.create(request.getParent(), request.getSchema(), request.getSchemaId());
  }

  synchronized Schema getSchema(GetSchemaRequest request) {
    return schemas.get(request.getName(), request.getView());
  }

  synchronized List<Schema> listSchemas(ListSchemasRequest request) {
    return schemas.list(request.getParent(), request.getView());
  }

  synchronized List<Schema> listSchemaRevisions(ListSchemaRevisionsRequest request) {
    return schemas.listRevisions(request.getName(), request.getView());
  }

  synchronized Schema commitSchema(CommitSchemaRequest request) {
    return schemas.commit(request.getName(), request.getSchema());
  }

  synchronized Schema rollbackSchema(RollbackSchemaRequest request) {
    return schemas.rollback(request.getName(), request.getRevisionId());
  }

  /** The revision comes in the name ({@code name@revision}), or in the deprecated revision_id. */
  @SuppressWarnings("deprecation")
  synchronized Schema deleteSchemaRevision(DeleteSchemaRevisionRequest request) {
    return schemas.deleteRevision(request.getName(), request.getRevisionId());
  }

  /** Deletes a schema; the topics that named it name {@code _deleted-schema_} from now on. */
  synchronized void deleteSchema(String name) {
    schemas.delete(name);
    for (Map.Entry<String, Topic> entry : topics.entrySet()) {
      Topic topic = entry.getValue();
      if (topic.getSchemaSettings().getSchema().equals(name)) {
        entry.setValue(
            topic.toBuilder()
                .setSchemaSettings(
                    topic.getSchemaSettings().toBuilder().setSchema(Schemas.DELETED_SCHEMA))
                .build());
      }
    }
  }

  synchronized void validateSchema(ValidateSchemaRequest request) {
    schemas.validate(request.getParent(), request.getSchema());
  }

  synchronized void validateMessage(ValidateMessageRequest request) {
    schemas.validateMessage(request);
  }

  // ---- helpers ----

  private Topic requireTopic(String name) {
    Names.check(name, "topics");
    Topic topic = topics.get(name);
    if (topic == null) {
      throw notFound(name);
    }
    return topic;
  }

  private SubscriptionState requireSubscription(String name) {
    Names.check(name, "subscriptions");
    SubscriptionState state = subscriptions.get(name);
    if (state == null) {
      throw notFound(name);
    }
    return state;
  }

  /** NOT_FOUND as the emulator words it: "Topic not found" / "Subscription does not exist". */
  static StatusRuntimeException notFound(String name) {
    return Status.NOT_FOUND
        .withDescription(
            name.contains("/subscriptions/") ? "Subscription does not exist" : "Topic not found")
        .asRuntimeException();
  }

  /** ALREADY_EXISTS as the emulator words it. */
  static StatusRuntimeException alreadyExists(String name) {
    return Status.ALREADY_EXISTS
        .withDescription(
            name.contains("/subscriptions/")
                ? "Subscription already exists"
                : "Topic already exists")
        .asRuntimeException();
  }
}
