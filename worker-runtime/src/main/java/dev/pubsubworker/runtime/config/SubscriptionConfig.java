package dev.pubsubworker.runtime.config;

import dev.pubsubworker.core.DurationText;
import dev.pubsubworker.core.FingerprintPolicy;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * One subscription's settings, after falling back to {@code subscription-defaults}, in three parts
 * that each read and check their own settings: what its guard does ({@link GuardPolicy}), how its
 * Pub/Sub client pulls ({@link ClientSettings}), and what happens to a delivery that cannot
 * complete now ({@link FailurePolicy}). See {@code reference.conf} for each setting's meaning and
 * default. The config keys stay flat ({@code lease}, {@code flow-control}, {@code
 * dead-letter-topic} side by side under the subscription); only the Java view is grouped.
 *
 * @param id the entry's name under {@code subscriptions}, used in logs and metrics
 * @param name the Pub/Sub subscription: an id in the worker's project, or a full {@code
 *     projects/P/subscriptions/S} path
 * @param handler the name of the handler a plugin binds
 * @param guard what its guard does: built once from this when the worker starts
 * @param client the Subscriber's settings
 * @param failures terminal failures, dead letters and held keys
 */
public record SubscriptionConfig(
    String id,
    String name,
    String handler,
    GuardPolicy guard,
    ClientSettings client,
    FailurePolicy failures) {

  /**
   * The client library's own shortest ack-deadline extension with exactly-once delivery when none
   * is set, capped by the longest one (google-cloud-pubsub's {@code
   * Subscriber.DEFAULT_MIN_ACK_DEADLINE_EXTENSION_EXACTLY_ONCE_DELIVERY}): what applies when {@code
   * min-ack-extension} equals {@code max-ack-extension-per-call}, since the client refuses equal
   * bounds and the worker then sets only the longest.
   */
  public static final Duration CLIENT_EXACTLY_ONCE_MIN_ACK_EXTENSION = Duration.ofSeconds(60);

  /** Streaming-pull connections per subscription: each holds a gRPC stream and its buffers. */
  static final int MAX_PARALLEL_PULL_COUNT = 64;

  /** Handler threads per subscription. */
  static final int MAX_EXECUTOR_THREADS = 1000;

  /** Flow control: messages one subscription holds at once. */
  static final int MAX_OUTSTANDING_MESSAGES = 1_000_000;

  /**
   * The shortest lease: the heartbeat extends every lease/3, so a lease of 1 s leaves about 333 ms
   * per extension round trip and two chances before the lease lapses; below that, ordinary store
   * latency or a GC pause loses leases of healthy handlers.
   */
  static final Duration MIN_LEASE = Duration.ofSeconds(1);

  private static final Pattern KEY_NAMESPACE = Pattern.compile("[A-Za-z0-9._-]{1,100}");

  /** A fully qualified Java class name (binary name: nested classes with {@code $}). */
  private static final Pattern CLASS_NAME =
      Pattern.compile(
          "\\p{javaJavaIdentifierStart}\\p{javaJavaIdentifierPart}*"
              + "(\\.\\p{javaJavaIdentifierStart}\\p{javaJavaIdentifierPart}*)*");

  /**
   * The key under which a message's resolved key is stored in the lock store: {@code keyNamespace +
   * ":" + key}. Since the namespace has no {@code :}, the first {@code :} always separates it from
   * the key, so two (namespace, key) pairs never share a stored key.
   */
  public String storedKey(String key) {
    return guard.keyNamespace() + ":" + key;
  }

  /**
   * What a subscription's guard does. The worker builds each subscription's {@code
   * IdempotencyGuard} from this once, at start; no setting here is sent again per message.
   *
   * @param mode lock, mutex or none
   * @param key how a message's key is derived
   * @param keyNamespace the namespace the subscription's keys are stored under: the subscription's
   *     id unless {@code key-namespace} names one; subscriptions with the same namespace
   *     de-duplicate across each other. Letters, digits, {@code . _ -} only, never {@code :}, so
   *     that {@link SubscriptionConfig#storedKey} is unambiguous
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
   */
  public record GuardPolicy(
      GuardMode mode,
      KeySpec key,
      String keyNamespace,
      Duration lease,
      Duration ttl,
      boolean heartbeat,
      boolean allowUnguarded,
      boolean fingerprint,
      FingerprintPolicy fingerprintMismatch,
      boolean transactional,
      boolean interruptOnLeaseLoss) {

    static GuardPolicy read(SettingsReader r, String id) {
      GuardMode mode = r.choice("guard", GuardMode.class, GuardMode.LOCK);
      String keyText = r.string("key");
      KeySpec key = new KeySpec.MessageId();
      try {
        key = KeySpec.parse(keyText);
      } catch (IllegalArgumentException e) {
        r.problem("key", e.getMessage());
      }
      String keyNamespace = keyNamespace(r, id);
      Duration lease = r.duration("lease", MIN_LEASE);
      Duration ttl = r.positiveDuration("ttl");
      boolean heartbeat = r.bool("heartbeat");
      boolean allowUnguarded = r.bool("allow-unguarded");
      boolean fingerprint = r.bool("fingerprint");
      FingerprintPolicy mismatch =
          r.choice("fingerprint-mismatch", FingerprintPolicy.class, FingerprintPolicy.REPORT);
      boolean transactional = r.bool("transactional");
      boolean interrupt = r.bool("interrupt-on-lease-loss");
      return new GuardPolicy(
          mode,
          key,
          keyNamespace,
          lease,
          ttl,
          heartbeat,
          allowUnguarded,
          fingerprint,
          mismatch,
          transactional,
          interrupt);
    }

    /** {@code key-namespace}, or the subscription id when it is empty; checked to have no ':'. */
    private static String keyNamespace(SettingsReader r, String id) {
      String configured = r.string("key-namespace");
      String namespace = configured.isEmpty() ? id : configured;
      if (KEY_NAMESPACE.matcher(namespace).matches()) {
        return namespace;
      }
      if (configured.isEmpty()) {
        r.ownProblem(
            "key-namespace",
            "defaults to the subscription id, but '"
                + id
                + "' is not a valid namespace (1-100 letters, digits, '.', '_' or '-'): set"
                + " key-namespace");
      } else {
        r.problem(
            "key-namespace",
            "must be 1-100 letters, digits, '.', '_' or '-' (no ':'), but was '"
                + configured
                + "'");
      }
      return namespace;
    }
  }

  /**
   * How the subscription's google-cloud-pubsub {@code Subscriber} pulls: exactly-once delivery,
   * flow control, streams, handler threads and ack deadlines.
   *
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
   */
  public record ClientSettings(
      ExactlyOnceMode exactlyOnce,
      int maxOutstandingMessages,
      long maxOutstandingBytes,
      int parallelPullCount,
      int executorThreads,
      Duration maxAckExtension,
      Duration minAckExtension,
      Duration maxAckExtensionPerCall) {

    static ClientSettings read(SettingsReader r) {
      ExactlyOnceMode exactlyOnce =
          r.choice("exactly-once", ExactlyOnceMode.class, ExactlyOnceMode.AUTO);
      SettingsReader flow = r.object("flow-control");
      int maxMessages = flow.intInRange("max-outstanding-messages", 1, MAX_OUTSTANDING_MESSAGES);
      long maxBytes = flow.positiveBytes("max-outstanding-bytes");
      flow.rejectUnknown();
      int parallelPull = r.intInRange("parallel-pull-count", 1, MAX_PARALLEL_PULL_COUNT);
      int threads = r.intInRange("executor-threads", 1, MAX_EXECUTOR_THREADS);
      Duration maxAck = r.positiveDuration("max-ack-extension");
      Duration minAck = r.positiveDuration("min-ack-extension");
      if (minAck.compareTo(Duration.ofSeconds(600)) > 0) {
        r.problem("min-ack-extension", "must be at most 600s (Pub/Sub's limit), but was " + minAck);
      }
      if (!r.failed("max-ack-extension")
          && !r.failed("min-ack-extension")
          && maxAck.compareTo(minAck) < 0) {
        // One extension would outlast the time the client may extend in all.
        r.problemOnAny(
            "max-ack-extension ("
                + DurationText.of(maxAck)
                + ") must be at least min-ack-extension ("
                + DurationText.of(minAck)
                + "), the shortest single extension the client asks for",
            "max-ack-extension",
            "min-ack-extension");
      }
      Duration maxAckPerCall = r.positiveDuration("max-ack-extension-per-call");
      if (r.failed("max-ack-extension-per-call")) {
        // Already reported (no unit, or not a duration): one problem per setting.
      } else if (maxAckPerCall.compareTo(Duration.ofSeconds(10)) < 0
          || maxAckPerCall.compareTo(Duration.ofSeconds(600)) > 0) {
        r.problem(
            "max-ack-extension-per-call",
            "must be between 10s and 600s (Pub/Sub's ack deadline limits), but was "
                + maxAckPerCall);
      } else if (r.failed("min-ack-extension")) {
        // Already reported; comparing with it would only repeat that.
      } else if (maxAckPerCall.compareTo(minAck) < 0) {
        r.problem(
            "max-ack-extension-per-call",
            "must be at least min-ack-extension ("
                + DurationText.of(minAck)
                + "), but was "
                + DurationText.of(maxAckPerCall));
      } else if (maxAckPerCall.equals(minAck)
          && minAck.compareTo(CLIENT_EXACTLY_ONCE_MIN_ACK_EXTENSION) > 0) {
        // The client refuses a minimum equal to the maximum, so the worker then sets the maximum
        // alone, and the client's own exactly-once minimum, min(60s, maximum), applies: that is
        // the configured minimum only up to 60s.
        r.problem(
            "max-ack-extension-per-call",
            "must be above min-ack-extension when that is above "
                + DurationText.of(CLIENT_EXACTLY_ONCE_MIN_ACK_EXTENSION)
                + " (the client library refuses equal bounds there), but both were "
                + DurationText.of(minAck));
      }
      return new ClientSettings(
          exactlyOnce, maxMessages, maxBytes, parallelPull, threads, maxAck, minAck, maxAckPerCall);
    }
  }

  /**
   * What happens to a delivery that cannot complete now: which handler failures are terminal, where
   * terminal failures go, where {@code redrive} reads them back, and how long a delivery whose key
   * is held waits.
   *
   * @param poisonExceptions fully qualified names of exception classes that make a handler failure
   *     terminal (dead-lettered after one attempt), besides {@code PoisonMessageException}; a
   *     subclass matches too. Resolved through the handler's class loader when the worker is built
   * @param deadLetterTopic where terminal failures are published, as {@code projects/P/topics/T},
   *     overriding the subscription's dead-letter policy topic; empty to use that policy's topic
   * @param deadLetterSubscription the subscription on the dead-letter topic that {@code redrive}
   *     reads by default, as {@code projects/P/subscriptions/S}; empty for none
   * @param redriveSubscription a subscription {@code run} also pulls, continuously, processing each
   *     message on it as this subscription would (its handler, guard, key namespace, and the
   *     original message a dead letter carries, so a message that ran before is a duplicate), as
   *     {@code projects/P/subscriptions/S}; empty for none. Never this subscription itself nor its
   *     {@code dead-letter-subscription}
   * @param inProgressMaxWait how long a delivery whose key is held (by another claim, or by a
   *     delivery of this process) waits, parked, before it is nacked; zero nacks at once. At most
   *     {@code maxAckExtension}
   */
  public record FailurePolicy(
      List<String> poisonExceptions,
      Optional<String> deadLetterTopic,
      Optional<String> deadLetterSubscription,
      Optional<String> redriveSubscription,
      Duration inProgressMaxWait) {

    public FailurePolicy {
      poisonExceptions = List.copyOf(poisonExceptions);
    }

    /**
     * @param client the subscription's client settings, which bound {@code in-progress-max-wait}
     */
    static FailurePolicy read(SettingsReader r, String projectId, ClientSettings client) {
      List<String> poisonExceptions = r.stringList("poison-exceptions");
      for (String className : poisonExceptions) {
        if (!CLASS_NAME.matcher(className).matches()) {
          r.problem(
              "poison-exceptions",
              "must list fully qualified exception class names, such as"
                  + " com.example.BadPayloadException, but has '"
                  + className
                  + "'");
          break;
        }
      }
      Optional<String> deadLetterTopic = deadLetterTopic(r, projectId);
      Optional<String> deadLetterSubscription =
          subscriptionPath(r, "dead-letter-subscription", projectId);
      Optional<String> redriveSubscription = subscriptionPath(r, "redrive-subscription", projectId);
      if (redriveSubscription.isPresent()
          && redriveSubscription.equals(deadLetterSubscription)
          && !r.failed("dead-letter-subscription")) {
        r.problemOnAny(
            "redrive-subscription must not be the dead-letter-subscription: terminal failures"
                + " would come straight back to be run again",
            "redrive-subscription",
            "dead-letter-subscription");
      }
      Duration inProgressMaxWait = r.duration("in-progress-max-wait", Duration.ZERO);
      Duration maxAck = client.maxAckExtension();
      if (!r.failed("in-progress-max-wait")
          && !r.failed("max-ack-extension")
          && inProgressMaxWait.compareTo(maxAck) > 0) {
        r.problem(
            "in-progress-max-wait",
            "must be at most max-ack-extension ("
                + DurationText.of(maxAck)
                + "), which bounds how long the client keeps a parked message, but was "
                + DurationText.of(inProgressMaxWait));
      }
      return new FailurePolicy(
          poisonExceptions,
          deadLetterTopic,
          deadLetterSubscription,
          redriveSubscription,
          inProgressMaxWait);
    }

    /**
     * A subscription setting ({@code dead-letter-subscription}, {@code redrive-subscription}):
     * empty for none, a subscription id in the worker's project, or {@code
     * projects/P/subscriptions/S}; returned as a full path.
     */
    private static Optional<String> subscriptionPath(
        SettingsReader r, String key, String projectId) {
      String name = r.string(key);
      if (name.isEmpty()) {
        return Optional.empty();
      }
      if (ResourceNames.SUBSCRIPTION_PATH.matcher(name).matches()) {
        return Optional.of(name);
      }
      if (name.matches(ResourceNames.TOPIC_ID) && !name.contains("/")) {
        return Optional.of("projects/" + projectId + "/subscriptions/" + name);
      }
      r.problem(
          key,
          "must be a subscription id (a letter, then 2 to 254 letters, digits and - . _ ~ + %, not"
              + " starting with goog) or projects/PROJECT/subscriptions/ID, but was '"
              + name
              + "'");
      return Optional.empty();
    }

    /**
     * {@code dead-letter-topic}: empty for none, a topic id in the worker's project, or {@code
     * projects/P/topics/T}; returned as a full path.
     */
    private static Optional<String> deadLetterTopic(SettingsReader r, String projectId) {
      String topic = r.string("dead-letter-topic");
      if (topic.isEmpty()) {
        return Optional.empty();
      }
      if (ResourceNames.TOPIC_PATH.matcher(topic).matches()) {
        return Optional.of(topic);
      }
      if (topic.matches(ResourceNames.TOPIC_ID) && !topic.contains("/")) {
        return Optional.of("projects/" + projectId + "/topics/" + topic);
      }
      r.problem(
          "dead-letter-topic",
          "must be a topic id (a letter, then 2 to 254 letters, digits and - . _ ~ + %, not"
              + " starting with goog) or projects/PROJECT/topics/ID, but was '"
              + topic
              + "'");
      return Optional.empty();
    }
  }

  /**
   * Reads one subscription's settings (or, with id {@code "defaults"}, those of {@code
   * subscription-defaults}), recording every problem in {@code r}. Reads every key it knows except
   * {@code name} and {@code handler}, which the caller reads, and marks those two as read.
   */
  static SubscriptionConfig read(
      SettingsReader r, String id, String name, String handler, String projectId) {
    GuardPolicy guard = GuardPolicy.read(r, id);
    ClientSettings client = ClientSettings.read(r);
    FailurePolicy failures = FailurePolicy.read(r, projectId, client);
    if (!name.isEmpty()
        && failures.redriveSubscription().isPresent()
        && failures
            .redriveSubscription()
            .get()
            .equals(
                name.startsWith("projects/")
                    ? name
                    : "projects/" + projectId + "/subscriptions/" + name)) {
      r.problem(
          "redrive-subscription",
          "must be another subscription than this one (" + name + "), which run pulls already");
    }
    r.skip("name");
    r.skip("handler");
    return new SubscriptionConfig(id, name, handler, guard, client, failures);
  }
}
