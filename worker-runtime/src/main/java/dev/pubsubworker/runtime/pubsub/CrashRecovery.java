package dev.pubsubworker.runtime.pubsub;

import com.google.api.core.InternalApi;
import dev.pubsubworker.pubsub.GuardedReceiver;
import dev.pubsubworker.runtime.config.ExactlyOnceMode;
import dev.pubsubworker.runtime.config.GuardMode;
import dev.pubsubworker.runtime.config.SubscriptionConfig;
import java.math.BigDecimal;
import java.time.Duration;

/**
 * How long a message can wait after the worker that held it crashed (SIGKILL, OOM, a lost node:
 * nobody nacks) until another worker runs it again, as one subscription's settings imply. {@code
 * check-config} prints it for each subscription and {@code run} logs it when a subscription starts.
 *
 * <p>Two things must happen before such a message runs again. Pub/Sub must redeliver it, which it
 * does once the message's current ack deadline lapses: at most {@link #ackDeadline} after the
 * crash, whether the dead worker was running the message, had it parked or queued, or had not even
 * read it yet (see {@link AckDeadlines}). And a key the dead worker was running must be claimable
 * again, which takes at most the {@link #keyHold lease} (the heartbeat renews it every lease/3); a
 * redelivery that arrives sooner is parked and retries its claim at most {@link #claimRetry} after
 * the lease lapsed. Both clocks run from the crash at once, so the worst case is {@link #worstCase}
 * = max(ack deadline, lease) + claim retry, on a worker with room for the message (flow control and
 * a handler thread) and with the worker's and the lock store's clocks in step. When {@code
 * in-progress-max-wait} is below the lease, a redelivery can be nacked while the key is still held
 * ({@link #plusRetryBackoff}), and the subscription's retry backoff adds to that.
 *
 * @param streamAckDeadline what the client sends when a stream opens: how long Pub/Sub leases a
 *     message it handed the stream until the client's first modifyAckDeadline for it
 * @param ackDeadline the longest ack deadline Pub/Sub holds a message for without hearing from the
 *     client: the stream ack deadline or one extension, whichever is longer
 * @param shortestExtension the shortest extension the client asks for without exactly-once delivery
 *     (from there it follows the 99.9th percentile of its ack times)
 * @param exactlyOnceExtension the shortest extension the client asks for with exactly-once delivery
 * @param exactlyOnce whether the subscription is taken to have exactly-once delivery, or is read at
 *     start-up
 * @param keyHold how long a key the dead worker was running stays claimed: the lease; zero with
 *     {@code guard = none}
 * @param claimRetry how late a parked redelivery retries its claim after that lease lapsed; zero
 *     with {@code guard = none}
 * @param plusRetryBackoff whether a redelivery can be nacked while the key is still held ({@code
 *     in-progress-max-wait} below the lease), so that the subscription's retry backoff adds to
 *     {@link #worstCase}
 */
@InternalApi("the figure check-config prints and run logs")
public record CrashRecovery(
    Duration streamAckDeadline,
    Duration ackDeadline,
    Duration shortestExtension,
    Duration exactlyOnceExtension,
    ExactlyOnceMode exactlyOnce,
    Duration keyHold,
    Duration claimRetry,
    boolean plusRetryBackoff) {

  /** What {@code config} implies. */
  public static CrashRecovery of(SubscriptionConfig config) {
    Duration stream = AckDeadlines.stream(config);
    Duration extension = AckDeadlines.longestExtension(config);
    boolean guarded = config.guard().mode() != GuardMode.NONE;
    return new CrashRecovery(
        stream,
        stream.compareTo(extension) >= 0 ? stream : extension,
        AckDeadlines.shortestExtension(config, false),
        AckDeadlines.shortestExtension(config, true),
        config.client().exactlyOnce(),
        guarded ? config.guard().lease() : Duration.ZERO,
        guarded ? GuardedReceiver.MAX_RETRY_LATENESS : Duration.ZERO,
        guarded && config.failures().inProgressMaxWait().compareTo(config.guard().lease()) < 0);
  }

  /** The same, for a subscription known to have exactly-once delivery on or off. */
  public CrashRecovery withExactlyOnce(boolean on) {
    return new CrashRecovery(
        streamAckDeadline,
        ackDeadline,
        shortestExtension,
        exactlyOnceExtension,
        on ? ExactlyOnceMode.ON : ExactlyOnceMode.OFF,
        keyHold,
        claimRetry,
        plusRetryBackoff);
  }

  /**
   * The longest a message can wait after a crash before it runs again: max({@link #ackDeadline},
   * {@link #keyHold}) + {@link #claimRetry}; plus the subscription's retry backoff if {@link
   * #plusRetryBackoff}.
   */
  public Duration worstCase() {
    Duration longer = ackDeadline.compareTo(keyHold) >= 0 ? ackDeadline : keyHold;
    return longer.plus(claimRetry);
  }

  /**
   * One line for people, e.g. {@code within 61.05s = max(ack deadline 60s, lease 30s) + claim retry
   * 1.05s; stream ack deadline 60s, extensions 10s..60s, 60s with exactly-once}.
   */
  public String describe() {
    StringBuilder line = new StringBuilder("within ").append(seconds(worstCase())).append(" = ");
    if (keyHold.isZero()) {
      line.append("ack deadline ").append(seconds(ackDeadline)).append(" (guard none)");
    } else {
      line.append("max(ack deadline ")
          .append(seconds(ackDeadline))
          .append(", lease ")
          .append(seconds(keyHold))
          .append(") + claim retry ")
          .append(seconds(claimRetry));
    }
    if (plusRetryBackoff) {
      line.append(
          " + the subscription's retry backoff (in-progress-max-wait is below the lease, so a"
              + " redelivery can be nacked while its key is still held)");
    }
    line.append("; stream ack deadline ")
        .append(seconds(streamAckDeadline))
        .append(", extensions ");
    String without = range(shortestExtension, ackDeadline);
    String with = range(exactlyOnceExtension, ackDeadline);
    switch (exactlyOnce) {
      case ON -> line.append(with).append(" (exactly-once)");
      case OFF -> line.append(without);
      case AUTO -> line.append(without).append(", ").append(with).append(" with exactly-once");
    }
    return line.toString();
  }

  private static String range(Duration from, Duration to) {
    return from.equals(to) ? seconds(to) : seconds(from) + ".." + seconds(to);
  }

  /** {@code 61.05s}, {@code 60s}. */
  static String seconds(Duration d) {
    return BigDecimal.valueOf(d.toMillis()).movePointLeft(3).stripTrailingZeros().toPlainString()
        + "s";
  }
}
