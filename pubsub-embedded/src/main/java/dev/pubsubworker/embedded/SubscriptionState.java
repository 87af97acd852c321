package dev.pubsubworker.embedded;

import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.ReceivedMessage;
import com.google.pubsub.v1.Subscription;
import io.grpc.Status;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * One subscription's messages and leases: the delivery rules of Pub/Sub in one place. Not
 * thread-safe: the {@link Broker} calls it under its lock, passing the current instant of its
 * clock.
 *
 * <p>Rules: a delivered message is leased until its deadline; an ack removes it; a nack (modack 0)
 * or an expired deadline gives it back, after the retry policy's backoff if there is one, or
 * forwards it to the dead-letter topic once it has been delivered {@code max_delivery_attempts}
 * times. A stream that goes away keeps its leases until their deadlines.
 *
 * <p>With message ordering, the unacked messages of an ordering key go out in publish order as a
 * run: a message is deliverable only when every earlier unacked message of its key is leased, and
 * only to the stream (or to unary Pull) that holds the latest of them. A nack or an expired
 * deadline ends the leases of every later message of the key, so the key is redelivered from that
 * message on, in order; acks of those later messages under their old ack ids are ignored.
 *
 * <p>Messages are dealt to the open streams in balance ({@link #nextStream}): each message goes to
 * the stream with the fewest outstanding messages among those with room under their window and
 * allowance ({@link PullStream#hasRoom}), the one served longest ago on a tie. Outstanding messages
 * are never moved between streams: a stream that opens later gets its share of what is still
 * undelivered and of what comes back (nacks, expired deadlines).
 */
final class SubscriptionState {

  private record Expiry(Instant deadline, QueuedMessage message, long generation) {}

  private final String id;
  private Subscription config;
  private final BiConsumer<String, PubsubMessage> deadLetterSink;
  private final ArrayDeque<QueuedMessage> ready = new ArrayDeque<>();
  private final PriorityQueue<QueuedMessage> delayed =
      new PriorityQueue<>(
          Comparator.comparing((QueuedMessage m) -> m.availableAt)
              .thenComparingLong(m -> m.sequence));
  private final PriorityQueue<Expiry> expiries =
      new PriorityQueue<>(Comparator.comparing(Expiry::deadline));
  private final Map<String, QueuedMessage> byAckId = new HashMap<>();
  private final Map<String, ArrayDeque<QueuedMessage>> keyQueues = new HashMap<>();
  private final LinkedHashMap<Long, QueuedMessage> unacked = new LinkedHashMap<>();
  private final List<QueuedMessage> retainedAcked = new ArrayList<>();
  final Set<PullStream> streams = new LinkedHashSet<>();
  private long nextAckId;
  private long deliveriesToStreams;

  SubscriptionState(Subscription config, BiConsumer<String, PubsubMessage> deadLetterSink) {
    this.config = config;
    this.id = Names.lastSegment(config.getName());
    this.deadLetterSink = deadLetterSink;
  }

  String id() {
    return id;
  }

  String name() {
    return config.getName();
  }

  Subscription config() {
    return config;
  }

  void updateConfig(Subscription updated) {
    this.config = updated;
  }

  boolean exactlyOnce() {
    return config.getEnableExactlyOnceDelivery();
  }

  int backlog() {
    return unacked.size();
  }

  /** Adds a newly published message. */
  void enqueue(QueuedMessage message) {
    unacked.put(message.sequence, message);
    String key = message.orderingKey();
    if (config.getEnableMessageOrdering() && !key.isEmpty()) {
      ArrayDeque<QueuedMessage> queue = keyQueues.computeIfAbsent(key, k -> new ArrayDeque<>());
      // Leased messages of a key always form a prefix, so the last one tells about all.
      boolean allEarlierLeased =
          queue.isEmpty() || queue.peekLast().state == QueuedMessage.State.LEASED;
      queue.add(message);
      if (!allEarlierLeased) {
        message.state = QueuedMessage.State.WAITING_FOR_KEY;
        return;
      }
    }
    makeReady(message);
  }

  private ArrayDeque<QueuedMessage> keyQueue(QueuedMessage message) {
    String key = message.orderingKey();
    return key.isEmpty() || !config.getEnableMessageOrdering() ? null : keyQueues.get(key);
  }

  /**
   * Whether {@code message} may go to {@code stream} (null: unary Pull) now: always, unless it has
   * an ordering key, in which case every earlier message of the key must be leased, the latest of
   * them to the same stream.
   */
  private boolean deliverableTo(QueuedMessage message, PullStream stream) {
    ArrayDeque<QueuedMessage> queue = keyQueue(message);
    if (queue == null) {
      return true;
    }
    boolean anyEarlier = false;
    PullStream holder = null;
    for (QueuedMessage earlier : queue) {
      if (earlier == message) {
        break;
      }
      if (earlier.state != QueuedMessage.State.LEASED) {
        return false;
      }
      anyEarlier = true;
      holder = earlier.leasedTo;
    }
    return !anyEarlier || holder == stream;
  }

  /** After {@code message} was leased: the next message of its key may follow in the same run. */
  private void offerNextOfKey(QueuedMessage message) {
    ArrayDeque<QueuedMessage> queue = keyQueue(message);
    if (queue == null) {
      return;
    }
    boolean afterMessage = false;
    for (QueuedMessage next : queue) {
      if (afterMessage) {
        if (next.state == QueuedMessage.State.WAITING_FOR_KEY) {
          next.state = QueuedMessage.State.READY;
          ready.addFirst(next);
        }
        return;
      }
      afterMessage = next == message;
    }
  }

  /** A nack or expiry of {@code message}: every later leased message of its key is taken back. */
  private void takeBackLaterOfKey(QueuedMessage message) {
    ArrayDeque<QueuedMessage> queue = keyQueue(message);
    if (queue == null) {
      return;
    }
    boolean afterMessage = false;
    for (QueuedMessage later : queue) {
      if (afterMessage && later.state != QueuedMessage.State.ACKED) {
        endLease(later);
        later.state = QueuedMessage.State.WAITING_FOR_KEY;
      }
      afterMessage |= later == message;
    }
  }

  /** Ends the current lease of {@code message} (its old ack ids stay known). */
  private void endLease(QueuedMessage message) {
    for (Map.Entry<String, PullStream> lease : message.ackIds.entrySet()) {
      if (lease.getValue() != null) {
        lease.getValue().remove(lease.getKey());
      }
    }
    message.currentAckId = null;
    message.leasedTo = null;
    message.leaseGeneration++;
  }

  private void makeReady(QueuedMessage message) {
    message.state = QueuedMessage.State.READY;
    message.availableAt = null;
    ready.add(message);
  }

  /** Moves due backoffs to the ready queue and expires due leases. */
  void advanceTo(Instant now) {
    while (!expiries.isEmpty() && !expiries.peek().deadline().isAfter(now)) {
      Expiry expiry = expiries.poll();
      QueuedMessage message = expiry.message();
      if (message.state == QueuedMessage.State.LEASED
          && message.leaseGeneration == expiry.generation()) {
        // The backoff runs from the deadline, however late this check comes.
        release(message, expiry.deadline());
      }
    }
    while (!delayed.isEmpty() && !delayed.peek().availableAt.isAfter(now)) {
      QueuedMessage message = delayed.poll();
      if (message.state == QueuedMessage.State.DELAYED) {
        makeReady(message);
      }
    }
  }

  /**
   * The next message deliverable to {@code stream} (null: unary Pull), taken off the ready queue;
   * null when there is none. Call {@link #advanceTo} first.
   */
  QueuedMessage nextReady(PullStream stream) {
    for (Iterator<QueuedMessage> it = ready.iterator(); it.hasNext(); ) {
      QueuedMessage message = it.next();
      if (message.state != QueuedMessage.State.READY) {
        it.remove();
      } else if (deliverableTo(message, stream)) {
        it.remove();
        return message;
      }
    }
    return null;
  }

  /**
   * The stream the next message goes to: of the open streams not in {@code excluded} that have room
   * at {@code now} ({@link PullStream#hasRoom}), the one with the fewest outstanding messages, and
   * among those the one that got a message longest ago (or never). Null when no stream can take
   * one.
   */
  PullStream nextStream(Instant now, Set<PullStream> excluded) {
    // The two largest holdings: every stream's allowance may reach what the fullest other holds.
    long most = 0;
    long secondMost = 0;
    for (PullStream stream : streams) {
      if (stream.open) {
        long holds = stream.outstanding.size();
        if (holds > most) {
          secondMost = most;
          most = holds;
        } else if (holds > secondMost) {
          secondMost = holds;
        }
      }
    }
    PullStream best = null;
    for (PullStream stream : streams) {
      if (!stream.open || excluded.contains(stream)) {
        continue;
      }
      long holds = stream.outstanding.size();
      long othersHold = holds == most ? secondMost : most;
      if (!stream.hasRoom(now, othersHold)) {
        continue;
      }
      if (best == null
          || holds < best.outstanding.size()
          || (holds == best.outstanding.size() && stream.lastDealt < best.lastDealt)) {
        best = stream;
      }
    }
    return best;
  }

  /** Returns a message taken by {@link #nextReady} but not delivered to the front of the queue. */
  void putBack(QueuedMessage message) {
    ready.addFirst(message);
  }

  /**
   * Leases {@code message} to {@code stream} (null for a unary Pull) and describes the delivery.
   */
  ReceivedMessage lease(QueuedMessage message, PullStream stream, int seconds, Instant now) {
    message.deliveries++;
    String ackId = id + "-" + message.sequence + "-" + (++nextAckId);
    message.currentAckId = ackId;
    message.leasedTo = stream;
    message.ackIds.put(ackId, stream);
    message.state = QueuedMessage.State.LEASED;
    message.deadline = now.plusSeconds(seconds);
    message.leaseGeneration++;
    expiries.add(new Expiry(message.deadline, message, message.leaseGeneration));
    byAckId.put(ackId, message);
    if (stream != null) {
      stream.add(ackId, message);
      stream.lastDealt = ++deliveriesToStreams;
    }
    offerNextOfKey(message);
    ReceivedMessage.Builder received =
        ReceivedMessage.newBuilder().setAckId(ackId).setMessage(message.message);
    if (config.hasDeadLetterPolicy()) {
      received.setDeliveryAttempt(message.deliveries);
    }
    return received.build();
  }

  /** Whether {@code ackId} has the shape of the ack ids this subscription hands out. */
  boolean isWellFormed(String ackId) {
    if (!ackId.startsWith(id + "-")) {
      return false;
    }
    String rest = ackId.substring(id.length() + 1);
    int dash = rest.indexOf('-');
    return dash > 0
        && dash < rest.length() - 1
        && rest.chars().filter(c -> c == '-').count() == 1
        && rest.replace("-", "").chars().allMatch(Character::isDigit);
  }

  /**
   * Whether {@code ackId} may be acked or modacked now. On exactly-once subscriptions only the
   * current, unexpired lease's ack id is valid; otherwise any ack id of an unacked message is.
   */
  boolean isValid(String ackId, Instant now) {
    QueuedMessage message = byAckId.get(ackId);
    if (message == null) {
      return false;
    }
    if (!exactlyOnce()) {
      return true;
    }
    return ackId.equals(message.currentAckId)
        && message.state == QueuedMessage.State.LEASED
        && message.deadline.isAfter(now);
  }

  /** Acknowledges the message of {@code ackId}; unknown ack ids are ignored. */
  void ack(String ackId) {
    QueuedMessage message = byAckId.get(ackId);
    if (message == null) {
      return;
    }
    if (keyQueue(message) != null && !ackId.equals(message.currentAckId)) {
      // A lease a nack or expiry of an earlier message took back: the message comes again.
      return;
    }
    PullStream holder = message.ackIds.get(ackId);
    settle(message);
    if (holder != null) {
      // Work done on a stream widens its allowance: a consumer that keeps up ramps up fast.
      holder.acked++;
    }
  }

  /**
   * Sets the deadline of {@code ackId}'s lease to now + {@code seconds}; 0 is a nack. Ack ids that
   * are not the message's current lease are ignored.
   */
  void modifyDeadline(String ackId, int seconds, Instant now) {
    QueuedMessage message = byAckId.get(ackId);
    if (message == null
        || message.state != QueuedMessage.State.LEASED
        || !ackId.equals(message.currentAckId)) {
      return;
    }
    if (seconds == 0) {
      release(message, now);
      return;
    }
    message.deadline = now.plusSeconds(seconds);
    message.leaseGeneration++;
    expiries.add(new Expiry(message.deadline, message, message.leaseGeneration));
  }

  /** Removes {@code message} for good (acked, dead-lettered or sought past). */
  private void settle(QueuedMessage message) {
    if (message.state == QueuedMessage.State.ACKED) {
      return;
    }
    dropLeases(message);
    message.state = QueuedMessage.State.ACKED;
    unacked.remove(message.sequence);
    if (config.getRetainAckedMessages()) {
      retainedAcked.add(message);
    }
    String key = message.orderingKey();
    ArrayDeque<QueuedMessage> queue = key.isEmpty() ? null : keyQueues.get(key);
    if (queue != null && queue.remove(message)) {
      if (queue.isEmpty()) {
        keyQueues.remove(key);
      } else {
        offerFirstWaiting(queue);
      }
    }
  }

  /** Makes the first not-leased message of a key ready if it was waiting behind another one. */
  private void offerFirstWaiting(ArrayDeque<QueuedMessage> queue) {
    for (QueuedMessage next : queue) {
      if (next.state != QueuedMessage.State.LEASED) {
        if (next.state == QueuedMessage.State.WAITING_FOR_KEY) {
          makeReady(next);
        }
        return;
      }
    }
  }

  private void dropLeases(QueuedMessage message) {
    for (Map.Entry<String, PullStream> lease : message.ackIds.entrySet()) {
      byAckId.remove(lease.getKey());
      if (lease.getValue() != null) {
        lease.getValue().remove(lease.getKey());
      }
    }
    message.ackIds.clear();
    message.currentAckId = null;
    message.leasedTo = null;
    message.leaseGeneration++;
  }

  /** A failed delivery (nack or expiry): redeliver after backoff, or dead-letter. */
  private void release(QueuedMessage message, Instant now) {
    endLease(message);
    takeBackLaterOfKey(message);
    if (config.hasDeadLetterPolicy()
        && message.deliveries >= maxDeliveryAttempts()
        && deadLetter(message)) {
      return;
    }
    Duration backoff = backoff(message.deliveries);
    if (backoff.isZero()) {
      makeReady(message);
    } else {
      message.state = QueuedMessage.State.DELAYED;
      message.availableAt = now.plus(backoff);
      delayed.add(message);
    }
  }

  int maxDeliveryAttempts() {
    int configured = config.getDeadLetterPolicy().getMaxDeliveryAttempts();
    return configured == 0 ? Validation.DEFAULT_MAX_DELIVERY_ATTEMPTS : configured;
  }

  /**
   * The wait before redelivering a message that failed {@code failures} times: none without a retry
   * policy, else minimum_backoff doubled per earlier failure, capped at maximum_backoff.
   */
  Duration backoff(int failures) {
    if (!config.hasRetryPolicy()) {
      return Duration.ZERO;
    }
    Duration min =
        config.getRetryPolicy().hasMinimumBackoff()
            ? toDuration(config.getRetryPolicy().getMinimumBackoff())
            : Validation.DEFAULT_MIN_BACKOFF;
    Duration max =
        config.getRetryPolicy().hasMaximumBackoff()
            ? toDuration(config.getRetryPolicy().getMaximumBackoff())
            : Validation.DEFAULT_MAX_BACKOFF;
    Duration backoff = min;
    for (int i = 1; i < failures && backoff.compareTo(max) < 0; i++) {
      backoff = backoff.multipliedBy(2);
    }
    return backoff.compareTo(max) > 0 ? max : backoff;
  }

  private static Duration toDuration(com.google.protobuf.Duration duration) {
    return Duration.ofSeconds(duration.getSeconds(), duration.getNanos());
  }

  private boolean deadLetter(QueuedMessage message) {
    String topic = config.getDeadLetterPolicy().getDeadLetterTopic();
    PubsubMessage forwarded =
        message.message.toBuilder()
            .clearMessageId()
            .clearPublishTime()
            .putAttributes(
                "CloudPubSubDeadLetterSourceDeliveryCount", Integer.toString(message.deliveries))
            .putAttributes("CloudPubSubDeadLetterSourceSubscription", id)
            .putAttributes(
                "CloudPubSubDeadLetterSourceSubscriptionProject", Names.project(config.getName()))
            .putAttributes(
                "CloudPubSubDeadLetterSourceTopicPublishTime", message.publishTime.toString())
            .build();
    try {
      deadLetterSink.accept(topic, forwarded);
    } catch (io.grpc.StatusRuntimeException missingTopic) {
      // The dead-letter topic is gone: the message stays here, as on Pub/Sub.
      return false;
    }
    settle(message);
    return true;
  }

  /**
   * Seeks to {@code time}: messages published before it become acked, the others (retained acked
   * ones included) unacked and deliverable now; every outstanding lease ends.
   */
  void seek(Instant time) {
    List<QueuedMessage> all = new ArrayList<>(unacked.values());
    all.addAll(retainedAcked);
    all.sort(Comparator.comparingLong(m -> m.sequence));
    for (QueuedMessage message : all) {
      dropLeases(message);
    }
    for (PullStream stream : streams) {
      stream.outstanding.clear();
      stream.outstandingBytes = 0;
    }
    ready.clear();
    delayed.clear();
    expiries.clear();
    keyQueues.clear();
    unacked.clear();
    retainedAcked.clear();
    for (QueuedMessage message : all) {
      if (message.publishTime.isBefore(time)) {
        message.state = QueuedMessage.State.ACKED;
        if (config.getRetainAckedMessages()) {
          retainedAcked.add(message);
        }
      } else {
        enqueue(message);
      }
    }
  }

  /** Ends every stream with {@code status}; their leases stay until their deadlines. */
  int closeStreams(Status status) {
    int closed = 0;
    for (PullStream stream : new ArrayList<>(streams)) {
      stream.close(status);
      closed++;
    }
    streams.clear();
    return closed;
  }

  // ---- snapshots (the admin surface): nothing above depends on these ----

  /** The unacked messages (leased or not), in publish order: what a snapshot captures. */
  List<QueuedMessage> unackedMessages() {
    List<QueuedMessage> backlog = new ArrayList<>(unacked.values());
    backlog.sort(Comparator.comparingLong(m -> m.sequence));
    return backlog;
  }

  /** Every message held, unacked or acked and retained, in publish order: what a seek can reach. */
  List<QueuedMessage> heldMessages() {
    List<QueuedMessage> held = new ArrayList<>(unacked.values());
    held.addAll(retainedAcked);
    held.sort(Comparator.comparingLong(m -> m.sequence));
    return held;
  }

  /**
   * Seeks to a snapshot (or to a time on a topic with retention): exactly {@code backlog} (new
   * entries, in publish order) becomes unacked and deliverable now; every other message becomes
   * acked (and is kept when acked messages are retained); every outstanding lease ends.
   */
  void seekToBacklog(List<QueuedMessage> backlog) {
    seek(Instant.MAX);
    Set<String> ids = new HashSet<>();
    for (QueuedMessage message : backlog) {
      ids.add(message.message.getMessageId());
    }
    retainedAcked.removeIf(message -> ids.contains(message.message.getMessageId()));
    for (QueuedMessage message : backlog) {
      enqueue(message);
    }
  }
}
