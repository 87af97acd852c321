package dev.pubsubworker.runtime.config;

import dev.pubsubworker.core.FingerprintPolicy;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * One subscription's settings, after falling back to {@code subscription-defaults}. See {@code
 * reference.conf} for each setting's meaning and default.
 *
 * @param id the entry's name under {@code subscriptions}, used in logs and metrics
 * @param name the Pub/Sub subscription: an id in the worker's project, or a full {@code
 *     projects/P/subscriptions/S} path
 * @param handler the name of the handler a plugin binds
 * @param guard lock, mutex or none
 * @param key how a message's key is derived
 * @param keyNamespace the namespace the subscription's keys are stored under: the subscription's id
 *     unless {@code key-namespace} names one; subscriptions with the same namespace de-duplicate
 *     across each other. Letters, digits, {@code . _ -} only, never {@code :}, so that {@link
 *     #storedKey} is unambiguous
 * @param lease the claim's lease
 * @param ttl the duplicate-suppression window
 * @param heartbeat whether leases are extended while the handler runs
 * @param allowUnguarded whether an unkeyed message (no key, or one the lock store refuses) runs
 *     without a guard; else it is dead-lettered and acked, the handler never runs (nacked with an
 *     ERROR only when no dead-letter topic is configured anywhere)
 * @param fingerprint whether a SHA-256 of the payload is stored and compared
 * @param fingerprintMismatch what a differing fingerprint does
 * @param transactional whether the handler runs in the SQL store's DONE transaction
 * @param interruptOnLeaseLoss whether the handler thread is interrupted when its lease is lost
 * @param exactlyOnce whether to treat the subscription as exactly-once
 * @param maxOutstandingMessages flow control: messages held at once
 * @param maxOutstandingBytes flow control: bytes held at once
 * @param parallelPullCount streaming pull connections
 * @param executorThreads handler threads
 * @param maxAckExtension the longest the client keeps extending a message's ack deadline
 * @param minAckExtension the shortest ack-deadline extension with exactly-once delivery
 * @param maxAckExtensionPerCall the longest ack deadline the client asks for: the stream ack
 *     deadline it sends when a stream opens, and the longest single extension; so it bounds how
 *     long Pub/Sub holds a message after its worker died (10s to 600s, at least {@code
 *     minAckExtension}, and above it when that is above {@link
 *     #CLIENT_EXACTLY_ONCE_MIN_ACK_EXTENSION})
 * @param poisonExceptions fully qualified names of exception classes that make a handler failure
 *     terminal (dead-lettered after one attempt), besides {@code PoisonMessageException}; a
 *     subclass matches too. Resolved through the handler's class loader when the worker is built
 * @param deadLetterTopic where terminal failures are published, as {@code projects/P/topics/T},
 *     overriding the subscription's dead-letter policy topic; empty to use that policy's topic
 * @param inProgressMaxWait how long a delivery whose key is held (by another claim, or by a
 *     delivery of this process) waits, parked, before it is nacked; zero nacks at once. At most
 *     {@code maxAckExtension}
 * @param deadLetterSubscription the subscription on the dead-letter topic that {@code redrive}
 *     reads by default, as {@code projects/P/subscriptions/S}; empty for none
 */
public record SubscriptionConfig(
    String id,
    String name,
    String handler,
    GuardMode guard,
    KeySpec key,
    String keyNamespace,
    Duration lease,
    Duration ttl,
    boolean heartbeat,
    boolean allowUnguarded,
    boolean fingerprint,
    FingerprintPolicy fingerprintMismatch,
    boolean transactional,
    boolean interruptOnLeaseLoss,
    ExactlyOnceMode exactlyOnce,
    int maxOutstandingMessages,
    long maxOutstandingBytes,
    int parallelPullCount,
    int executorThreads,
    Duration maxAckExtension,
    Duration minAckExtension,
    Duration maxAckExtensionPerCall,
    List<String> poisonExceptions,
    Optional<String> deadLetterTopic,
    Duration inProgressMaxWait,
    Optional<String> deadLetterSubscription) {

  /**
   * The client library's own shortest ack-deadline extension with exactly-once delivery when none
   * is set, capped by the longest one (google-cloud-pubsub's {@code
   * Subscriber.DEFAULT_MIN_ACK_DEADLINE_EXTENSION_EXACTLY_ONCE_DELIVERY}): what applies when {@code
   * min-ack-extension} equals {@code max-ack-extension-per-call}, since the client refuses equal
   * bounds and the worker then sets only the longest.
   */
  public static final Duration CLIENT_EXACTLY_ONCE_MIN_ACK_EXTENSION = Duration.ofSeconds(60);

  /**
   * The key under which a message's resolved key is stored in the lock store: {@code keyNamespace +
   * ":" + key}. Since the namespace has no {@code :}, the first {@code :} always separates it from
   * the key, so two (namespace, key) pairs never share a stored key.
   */
  public String storedKey(String key) {
    return keyNamespace + ":" + key;
  }
}
