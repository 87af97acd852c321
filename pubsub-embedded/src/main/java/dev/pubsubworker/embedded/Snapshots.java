package dev.pubsubworker.embedded;

import com.google.protobuf.FieldMask;
import com.google.protobuf.Timestamp;
import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.Snapshot;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;

/**
 * The server's snapshots. A snapshot captures a subscription's acknowledgment state when it is
 * created: it retains the messages unacked then, and every message published to the topic after it,
 * until it expires or is deleted. Not thread-safe: the {@link Broker} calls it under its lock,
 * passing the current instant of its clock.
 *
 * <p>A snapshot lives {@code 7 days - (age of the oldest unacked message)} (7 days with an empty
 * backlog); a snapshot that would expire within 1 hour is refused with FAILED_PRECONDITION, as
 * Pub/Sub documents. Expired snapshots disappear at the next call.
 */
final class Snapshots {

  /** The longest life of a snapshot, from the publish time of its oldest message. */
  static final Duration MAX_LIFETIME = Duration.ofDays(7);

  /** Pub/Sub refuses a snapshot that would expire sooner than this. */
  static final Duration MIN_LIFETIME = Duration.ofHours(1);

  private static final Set<String> UPDATABLE = Set.of("labels", "expire_time");

  /** A snapshot and the messages it retains, in publish order. */
  static final class Entry {
    Snapshot snapshot;
    final Instant created;

    /** The topic was deleted after the snapshot was taken: it matches no subscription now. */
    boolean topicDeleted;

    final List<PubsubMessage> messages;

    Entry(Snapshot snapshot, Instant created, List<PubsubMessage> messages) {
      this.snapshot = snapshot;
      this.created = created;
      this.messages = messages;
    }

    Instant expireTime() {
      return instant(snapshot.getExpireTime());
    }
  }

  private final NavigableMap<String, Entry> snapshots = new TreeMap<>();

  /**
   * Creates a snapshot of a subscription on {@code topic} whose unacked messages are {@code
   * backlog} (in publish order). An empty {@code name} gets a server-chosen one in {@code project}.
   *
   * @throws StatusRuntimeException ALREADY_EXISTS "Snapshot already exists"; FAILED_PRECONDITION
   *     when the backlog is so old that the snapshot would expire within an hour
   */
  Snapshot create(
      String name,
      String project,
      String topic,
      List<PubsubMessage> backlog,
      Map<String, String> labels,
      Instant now) {
    expire(now);
    String snapshotName =
        name.isEmpty()
            ? project + "/snapshots/snapshot-" + UUID.randomUUID()
            : Names.check(name, "snapshots");
    if (snapshots.containsKey(snapshotName)) {
      throw Status.ALREADY_EXISTS.withDescription("Snapshot already exists").asRuntimeException();
    }
    Instant oldest = now;
    for (PubsubMessage message : backlog) {
      Instant published = instant(message.getPublishTime());
      if (published.isBefore(oldest)) {
        oldest = published;
      }
    }
    Instant expireTime = oldest.plus(MAX_LIFETIME);
    if (expireTime.isBefore(now.plus(MIN_LIFETIME))) {
      throw Status.FAILED_PRECONDITION
          .withDescription(
              "The subscription's backlog is too old to snapshot: its oldest unacked message was"
                  + " published at "
                  + oldest
                  + ", so the snapshot would expire at "
                  + expireTime
                  + ", less than 1 hour from now (a snapshot lives 7 days minus the age of the"
                  + " oldest unacked message)")
          .asRuntimeException();
    }
    Snapshot snapshot =
        Snapshot.newBuilder()
            .setName(snapshotName)
            .setTopic(topic)
            .setExpireTime(timestamp(expireTime))
            .putAllLabels(labels)
            .build();
    snapshots.put(snapshotName, new Entry(snapshot, now, new ArrayList<>(backlog)));
    return snapshot;
  }

  Snapshot get(String name, Instant now) {
    return require(name, now).snapshot;
  }

  /** The live snapshot {@code name} with its messages. */
  Entry require(String name, Instant now) {
    Names.check(name, "snapshots");
    expire(now);
    Entry entry = snapshots.get(name);
    if (entry == null) {
      throw Status.NOT_FOUND.withDescription("Snapshot does not exist").asRuntimeException();
    }
    return entry;
  }

  List<Snapshot> list(String project, Instant now) {
    Names.checkProject(project);
    expire(now);
    String prefix = project + "/snapshots/";
    List<Snapshot> result = new ArrayList<>();
    for (Entry entry : snapshots.subMap(prefix, prefix + Character.MAX_VALUE).values()) {
      result.add(entry.snapshot);
    }
    return result;
  }

  /** Names of the snapshots taken on {@code topic} (the topic as it is now, not a deleted one). */
  List<String> listForTopic(String topic, Instant now) {
    expire(now);
    List<String> result = new ArrayList<>();
    for (Entry entry : snapshots.values()) {
      if (!entry.topicDeleted && entry.snapshot.getTopic().equals(topic)) {
        result.add(entry.snapshot.getName());
      }
    }
    return result;
  }

  /**
   * Updates {@code labels} and/or {@code expire_time}. An expire time must lie in the future and no
   * later than 7 days after the snapshot's creation (the longest a snapshot lives).
   *
   * @throws StatusRuntimeException INVALID_ARGUMENT for other fields or an expire time out of range
   */
  Snapshot update(Snapshot update, FieldMask mask, Instant now) {
    Entry entry = require(update.getName(), now);
    for (String path : mask.getPathsList()) {
      if (!UPDATABLE.contains(path)) {
        throw Validation.invalid(
            "Invalid update_mask provided in the UpdateSnapshotRequest: the '"
                + path
                + "' field cannot be updated (only labels and expire_time can)");
      }
    }
    Snapshot merged =
        FieldMasks.apply(entry.snapshot, update, mask, "UpdateSnapshotRequest", Set.of());
    if (!merged.getExpireTime().equals(entry.snapshot.getExpireTime())) {
      Instant requested = instant(merged.getExpireTime());
      Instant latest = entry.created.plus(MAX_LIFETIME);
      if (!requested.isAfter(now) || requested.isAfter(latest)) {
        throw Validation.invalid(
            "Invalid expire_time "
                + requested
                + ": must be after now ("
                + now
                + ") and no later than "
                + latest);
      }
    }
    entry.snapshot = merged;
    return merged;
  }

  void delete(String name, Instant now) {
    require(name, now);
    snapshots.remove(name);
  }

  /** A message published to {@code topic}: every live snapshot of the topic retains it. */
  void published(String topic, PubsubMessage message) {
    for (Entry entry : snapshots.values()) {
      if (!entry.topicDeleted && entry.snapshot.getTopic().equals(topic)) {
        entry.messages.add(message);
      }
    }
  }

  /** {@code topic} was deleted: its snapshots stay, but match no subscription any more. */
  void topicDeleted(String topic) {
    for (Entry entry : snapshots.values()) {
      if (entry.snapshot.getTopic().equals(topic)) {
        entry.topicDeleted = true;
      }
    }
  }

  private void expire(Instant now) {
    for (Iterator<Entry> it = snapshots.values().iterator(); it.hasNext(); ) {
      if (!it.next().expireTime().isAfter(now)) {
        it.remove();
      }
    }
  }

  static Instant instant(Timestamp timestamp) {
    return Instant.ofEpochSecond(timestamp.getSeconds(), timestamp.getNanos());
  }

  static Timestamp timestamp(Instant instant) {
    return Timestamp.newBuilder()
        .setSeconds(instant.getEpochSecond())
        .setNanos(instant.getNano())
        .build();
  }
}
