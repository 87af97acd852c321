package dev.pubsubworker.core;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers guard events to every registered {@link GuardListener}. A listener that throws is logged
 * and skipped: observation never changes the guard's control flow.
 */
final class GuardEvents {

  private static final Logger log = LoggerFactory.getLogger(GuardEvents.class);

  private final List<GuardListener> listeners;

  GuardEvents(List<GuardListener> listeners) {
    this.listeners = List.copyOf(listeners);
  }

  void claimed(String key, long fence, boolean reclaim) {
    each("claimed", l -> l.claimed(key, fence, reclaim));
  }

  void duplicate(String key) {
    each("duplicate", l -> l.duplicate(key));
  }

  void contended(String key, @Nullable Instant leaseExpiry) {
    each("contended", l -> l.contended(key, leaseExpiry));
  }

  void completed(String key, long fence, Duration workTime) {
    each("completed", l -> l.completed(key, fence, workTime));
  }

  void released(String key, long fence, boolean afterFailure) {
    each("released", l -> l.released(key, fence, afterFailure));
  }

  void leaseExtended(String key, long fence) {
    each("leaseExtended", l -> l.leaseExtended(key, fence));
  }

  void leaseLost(String key, long fence, GuardListener.LeaseLoss cause) {
    each("leaseLost", l -> l.leaseLost(key, fence, cause));
  }

  void fencedOut(String key, long fence) {
    each("fencedOut", l -> l.fencedOut(key, fence));
  }

  void fencedOutRolledBack(String key, long fence) {
    each("fencedOutRolledBack", l -> l.fencedOutRolledBack(key, fence));
  }

  void completeFailed(String key, long fence, RuntimeException error) {
    each("completeFailed", l -> l.completeFailed(key, fence, error));
  }

  void fingerprintMismatch(String key) {
    each("fingerprintMismatch", l -> l.fingerprintMismatch(key));
  }

  /** Reports a store call that started at {@code startedNanos} ({@link System#nanoTime()}). */
  void backendCall(GuardListener.Verb verb, long startedNanos, boolean succeeded) {
    if (listeners.isEmpty()) {
      return;
    }
    Duration latency = Duration.ofNanos(System.nanoTime() - startedNanos);
    each("backendCall", l -> l.backendCall(verb, latency, succeeded));
  }

  /** Reports one batch round trip of {@code size} entries. */
  void batch(GuardListener.Verb verb, int size, Duration latency, boolean succeeded) {
    if (listeners.isEmpty()) {
      return;
    }
    each("batch", l -> l.batch(verb, size, latency, succeeded));
  }

  private void each(String event, Consumer<GuardListener> call) {
    for (GuardListener listener : listeners) {
      try {
        call.accept(listener);
      } catch (RuntimeException e) {
        log.warn("guard listener {} threw on {}; ignored", listener.getClass().getName(), event, e);
      }
    }
  }
}
