package dev.pubsubworker.embedded;

import io.grpc.Status;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Fault-injection switches of an {@link EmbeddedPubSub}: each one is deterministic (it acts on the
 * next matching requests, never at random) and stays set until cleared.
 *
 * <p>A subscription is named by its id ({@code "orders"}) or its full name ({@code
 * "projects/p/subscriptions/orders"}); the id matches that subscription in every project. Switches
 * apply to acks and deliveries that reach the server after they are set, by unary RPC or on a
 * StreamingPull stream alike.
 *
 * <p>Thread-safe.
 */
public final class Faults {

  private final Broker broker;
  private final Map<String, Boolean> droppedAcks = new ConcurrentHashMap<>();
  private final Map<String, Duration> delayedAcks = new ConcurrentHashMap<>();
  private final Map<String, Status.Code> failedAcks = new ConcurrentHashMap<>();
  private final Map<String, Integer> duplicates = new ConcurrentHashMap<>();
  private final Map<String, Boolean> paused = new ConcurrentHashMap<>();
  private volatile Duration latency = Duration.ZERO;

  Faults(Broker broker) {
    this.broker = broker;
  }

  /**
   * Drops acks on {@code subscription}: each Acknowledge (or in-stream ack) is answered with
   * success and forgotten, so the message is redelivered once its deadline passes, as when an ack
   * is lost on the network. Modacks and nacks are not affected.
   */
  public void dropAcks(String subscription) {
    droppedAcks.put(key(subscription), Boolean.TRUE);
  }

  /**
   * Delays acks on {@code subscription}: an ack takes effect, and a unary Acknowledge is answered,
   * only once the server's clock has moved {@code delay} past its arrival (checked at each tick).
   * An ack whose lease expires meanwhile arrives late: on an exactly-once subscription it then
   * fails with {@code PERMANENT_FAILURE_INVALID_ACK_ID}.
   *
   * @throws IllegalArgumentException if {@code delay} is negative or zero
   */
  public void delayAcks(String subscription, Duration delay) {
    if (delay.isNegative() || delay.isZero()) {
      throw new IllegalArgumentException("ack delay must be > 0, but was " + delay);
    }
    delayedAcks.put(key(subscription), delay);
  }

  /**
   * Fails acks on {@code subscription}: each Acknowledge RPC is answered with {@code code} (no
   * per-ack-id details) and not applied; in-stream acks are ignored. The client retries retryable
   * codes ({@code UNAVAILABLE}, {@code INTERNAL}, ...); on exactly-once subscriptions others
   * complete the ack future ({@code FAILED_PRECONDITION}, {@code PERMISSION_DENIED}, otherwise
   * {@code OTHER}).
   *
   * @throws IllegalArgumentException if {@code code} is {@code OK}
   */
  public void failAcks(String subscription, Status.Code code) {
    if (code == Status.Code.OK) {
      throw new IllegalArgumentException("a failing ack needs a status other than OK");
    }
    failedAcks.put(key(subscription), code);
  }

  /**
   * Duplicates the next {@code count} deliveries on {@code subscription}: each such message is
   * delivered twice in a row, under two ack ids (both valid unless the subscription has
   * exactly-once delivery, where only the later one is).
   *
   * @throws IllegalArgumentException if {@code count} is below 1
   */
  public void duplicateDeliveries(String subscription, int count) {
    if (count < 1) {
      throw new IllegalArgumentException("count must be >= 1, but was " + count);
    }
    duplicates.merge(key(subscription), count, Integer::sum);
  }

  /**
   * Resets (ends with {@code UNAVAILABLE}) every open StreamingPull stream of {@code subscription}
   * now, as a broken connection or a killed worker would; the client reconnects by itself. Messages
   * the streams held keep their leases and are redelivered at their deadlines.
   *
   * @return how many streams were reset
   */
  public int resetStreams(String subscription) {
    return broker.resetStreams(key(subscription));
  }

  /**
   * Adds {@code latency} (wall-clock time, not the server's clock) before every request message of
   * every RPC is handled; {@link Duration#ZERO} removes it.
   *
   * @throws IllegalArgumentException if {@code latency} is negative
   */
  public void addLatency(Duration latency) {
    if (latency.isNegative()) {
      throw new IllegalArgumentException("latency must be >= 0, but was " + latency);
    }
    this.latency = latency;
  }

  /**
   * Pauses delivery on {@code subscription}: Pull returns no messages and streams receive none;
   * leases, deadlines and publishing go on. {@link #resumeDelivery} ends it.
   */
  public void pauseDelivery(String subscription) {
    paused.put(key(subscription), Boolean.TRUE);
  }

  /** Resumes delivery paused by {@link #pauseDelivery}. */
  public void resumeDelivery(String subscription) {
    paused.remove(key(subscription));
    broker.deliverAll();
  }

  /** Clears every switch of {@code subscription}. */
  public void clear(String subscription) {
    String key = key(subscription);
    droppedAcks.remove(key);
    delayedAcks.remove(key);
    failedAcks.remove(key);
    duplicates.remove(key);
    paused.remove(key);
    broker.deliverAll();
  }

  /** Clears every switch, latency included. */
  public void clearAll() {
    droppedAcks.clear();
    delayedAcks.clear();
    failedAcks.clear();
    duplicates.clear();
    paused.clear();
    latency = Duration.ZERO;
    broker.deliverAll();
  }

  private static String key(String subscription) {
    Objects.requireNonNull(subscription, "subscription");
    String id = Names.lastSegment(subscription);
    if (id.isEmpty()) {
      throw new IllegalArgumentException("subscription must be an id or a full name");
    }
    return id;
  }

  boolean acksDropped(String subscriptionId) {
    return droppedAcks.containsKey(subscriptionId);
  }

  Duration ackDelay(String subscriptionId) {
    return delayedAcks.get(subscriptionId);
  }

  Status.Code ackFailure(String subscriptionId) {
    return failedAcks.get(subscriptionId);
  }

  /** Whether the next delivery on the subscription is to be sent twice; counts it down. */
  boolean takeDuplicate(String subscriptionId) {
    boolean[] taken = {false};
    duplicates.computeIfPresent(
        subscriptionId,
        (k, left) -> {
          taken[0] = true;
          return left <= 1 ? null : left - 1;
        });
    return taken[0];
  }

  boolean deliveryPaused(String subscriptionId) {
    return paused.containsKey(subscriptionId);
  }

  /** Whether delayed acks wait for their time (for tests). */
  boolean hasPendingAcks() {
    return broker.hasDelayedAcks();
  }

  Duration latency() {
    return latency;
  }
}
