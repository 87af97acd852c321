package dev.pubsubworker.pubsub;

import com.google.cloud.pubsub.v1.AckResponse;
import dev.pubsubworker.api.InboundMessage;
import dev.pubsubworker.core.InvalidLockRecordException;
import dev.pubsubworker.core.KeyInProgressException;
import dev.pubsubworker.core.LockBackendException;
import java.time.Instant;
import java.util.Optional;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a receiver does with failures: which outcome each gets, routing terminal ones to the dead
 * letters, and one log line for each, limited where an outage or a poison message would repeat it
 * endlessly (store failures per cause class, handler failures per exception class, unkeyed
 * messages): once per {@link GuardedReceiver#REPEAT_INTERVAL} per kind, with the count held back
 * since; the rest at DEBUG. Thread-safe.
 */
final class Failures {

  private static final Logger log = LoggerFactory.getLogger(Failures.class);

  private final String subscription;
  private final String handlerName;
  private final TerminalFailures terminal;
  private final DeadLetters deadLetters;
  private final RepeatLimiter repeats;
  private final UnaryOperator<String> keyLogFormat;

  Failures(
      String subscription,
      String handlerName,
      TerminalFailures terminal,
      DeadLetters deadLetters,
      RepeatLimiter repeats,
      UnaryOperator<String> keyLogFormat) {
    this.subscription = subscription;
    this.handlerName = handlerName;
    this.terminal = terminal;
    this.deadLetters = deadLetters;
    this.repeats = repeats;
    this.keyLogFormat = keyLogFormat;
  }

  /**
   * The handler threw {@code e}: a terminal exception dead-letters the message, any other nacks it
   * ({@link Outcome#FAILED}). A delivery abandoned at the stop was nacked already; the interrupt is
   * why it stopped.
   */
  Outcome handlerFailed(Delivery d, Exception e) {
    InboundMessage message = d.message();
    if (d.isSettled()) {
      log.info(
          "handler {} on message {} stopped after being abandoned at shutdown: {}",
          handlerName,
          message.messageId(),
          e.toString());
      return Outcome.FAILED;
    }
    Optional<Throwable> poison = terminal.find(e);
    if (poison.isPresent()) {
      Throwable p = poison.get();
      return deadLetters.deadLetter(
          message,
          new DeadLetters.Failure(
              p.getClass().getName(),
              p.getMessage(),
              "failed in handler " + handlerName + " with the terminal " + p,
              Outcome.FAILED,
              e));
    }
    // A poison message without a dead-letter policy fails forever: one ERROR with the stack trace
    // per exception class per interval, the rest at DEBUG.
    RepeatLimiter.Decision r = repeats.check("handler-failed:" + e.getClass().getName());
    if (r.write()) {
      log.error(
          "handler {} failed on message {} (attempt {}); nacked for redelivery{}",
          handlerName,
          message.messageId(),
          InboundMessages.attemptText(message),
          r.suppressedNote(),
          e);
    } else if (log.isDebugEnabled()) {
      log.debug(
          "handler {} failed on message {} (attempt {}); nacked for redelivery",
          handlerName,
          message.messageId(),
          InboundMessages.attemptText(message),
          e);
    }
    return Outcome.FAILED;
  }

  /**
   * A message without a (valid) key while fail closed: it never gains a key, so it is a terminal
   * failure, dead-lettered at once (or, without a dead-letter topic, nacked with an ERROR).
   *
   * @param errorClass {@code no-key} or {@code invalid-key}
   * @param why what is wrong with its key, e.g. "no key: attribute:id did not resolve"
   */
  Outcome unkeyed(InboundMessage message, String errorClass, String why) {
    return deadLetters.deadLetter(
        message,
        new DeadLetters.Failure(
            errorClass,
            why,
            "has "
                + why
                + " and is not run (fail closed; allow unguarded runs to run such messages"
                + " unguarded)",
            Outcome.UNKEYED,
            null));
  }

  /**
   * The lock store failed before the handler ran ({@link Outcome#STORE_FAILED}): one ERROR line per
   * failure kind (the cause's class) per interval, with its stack trace and the count held back
   * since; the others at DEBUG.
   */
  Outcome storeFailed(InboundMessage message, LockBackendException e) {
    if (e instanceof InvalidLockRecordException unreadable) {
      unreadableRecord(message, unreadable);
      return Outcome.STORE_FAILED;
    }
    Throwable cause = e.getCause() == null ? e : e.getCause();
    RepeatLimiter.Decision r = repeats.check("store-failed:" + cause.getClass().getName());
    if (r.write()) {
      log.error(
          "lock store failed for message {} (attempt {}); nacked: {}{}",
          message.messageId(),
          InboundMessages.attemptText(message),
          e.getMessage(),
          r.suppressedNote(),
          e);
    } else if (log.isDebugEnabled()) {
      log.debug(
          "lock store failed for message {} (attempt {}); nacked: {}",
          message.messageId(),
          InboundMessages.attemptText(message),
          e.getMessage(),
          e);
    }
    return Outcome.STORE_FAILED;
  }

  /**
   * The key's record is one the lock store's backend cannot read: nothing was claimed and the
   * handler did not run; every delivery of the key fails so until an operator removes the record.
   * One ERROR per interval says how (the others at DEBUG).
   */
  private void unreadableRecord(InboundMessage message, InvalidLockRecordException e) {
    RepeatLimiter.Decision r = repeats.check("unreadable-record");
    String key = keyLogFormat.apply(e.key());
    if (r.write()) {
      log.error(
          "the lock store holds a record for key {} that cannot be read ({}); message {} (attempt"
              + " {}) nacked, its handler not run. The key stays blocked until the record is"
              + " removed: see it with `inspect KEY`, remove it with `forget KEY` (LockAdmin's"
              + " inspect and forget){}",
          key,
          e.problem(),
          message.messageId(),
          InboundMessages.attemptText(message),
          r.suppressedNote());
    } else {
      log.debug(
          "unreadable lock record for key {} ({}); message {} nacked",
          key,
          e.problem(),
          message.messageId());
    }
  }

  /**
   * The key is not available and the delivery does not park (no waiting, or a mutex over a DONE
   * key): nacked ({@link Outcome#IN_PROGRESS}) with a WARN.
   */
  Outcome inProgress(InboundMessage message, String key, KeyInProgressException e) {
    // With parking off, every delivery of a held key comes here: one line per interval, not one
    // per delivery (the settled counter counts them all).
    RepeatLimiter.Decision once = repeats.check("in-progress:" + e.reason());
    String why =
        e.reason() == KeyInProgressException.Reason.DONE
            ? "DONE, and a mutex never runs over a completed key"
            : "held until " + e.leaseExpiry().map(Instant::toString).orElse("?");
    if (once.write()) {
      log.warn(
          "key {} is in progress elsewhere ({}); delivery attempt {} of message {} nacked for a"
              + " later retry{}",
          keyLogFormat.apply(key),
          why,
          InboundMessages.attemptText(message),
          message.messageId(),
          once.suppressedNote());
    } else {
      log.debug(
          "key {} is in progress elsewhere ({}); message {} nacked",
          keyLogFormat.apply(key),
          why,
          message.messageId());
    }
    return Outcome.IN_PROGRESS;
  }

  /** The payload's fingerprint differs from the key's, and the policy rejects it: nacked. */
  Outcome fingerprintRejected(InboundMessage message, String key) {
    log.warn(
        "message {} reuses key {} for a different payload; rejected and nacked (attempt {})",
        message.messageId(),
        keyLogFormat.apply(key),
        InboundMessages.attemptText(message));
    return Outcome.FINGERPRINT_REJECTED;
  }

  /** An exactly-once ack came back with {@code response}; anything but success is logged. */
  void ackResponse(String messageId, AckResponse response) {
    if (response != AckResponse.SUCCESSFUL) {
      log.warn(
          "ack of message {} on subscription {} returned {}: Pub/Sub will redeliver it, and the"
              + " DONE record makes the redelivery a duplicate",
          messageId,
          subscription,
          response);
    }
  }
}
