package dev.pubsubworker.runtime.observability;

import dev.pubsubworker.runtime.pubsub.RunningHandler;
import dev.pubsubworker.runtime.store.LockStoreCalls;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The liveness and readiness verdicts behind {@code /healthz} and {@code /readyz}.
 *
 * <ul>
 *   <li><b>Live</b> unless the worker failed (a subscriber died and the worker stopped itself), a
 *       lock-store call has been in progress longer than {@code stuckAfter} (a thread stuck in the
 *       store: a restart is the way out), or, when {@code handlerStuckAfter} is not zero, a
 *       delivery has been in progress on a handler thread longer than that (a wedged handler). A
 *       graceful stop stays live: Kubernetes is already terminating the pod.
 *   <li><b>Ready</b> only when every subscriber is pulling, every subscription's streaming pull is
 *       up (none has been failing or reconnecting for longer than the settle time, see {@link
 *       dev.pubsubworker.runtime.pubsub.StreamHealth}), no stop is under way, and the lock store
 *       answered (a guard call or the probe returned) within {@code staleAfter}.
 * </ul>
 *
 * Each verdict carries a plain-text explanation. Thread-safe; no I/O.
 */
final class Health {

  /** A verdict and its explanation (one line per reason when negative). */
  record Verdict(boolean ok, String text) {}

  private final WorkerStatus worker;
  private final LockStoreFreshness lockStore;
  private final Duration staleAfter;
  private final Clock clock;
  private final LockStoreCalls calls;
  private final Duration stuckAfter;
  private final Duration handlerStuckAfter;

  /** Without the handler check. */
  Health(
      WorkerStatus worker,
      LockStoreFreshness lockStore,
      Duration staleAfter,
      Clock clock,
      LockStoreCalls calls,
      Duration stuckAfter) {
    this(worker, lockStore, staleAfter, clock, calls, stuckAfter, Duration.ZERO);
  }

  /**
   * @param handlerStuckAfter how long a delivery may be in progress on a handler thread before
   *     liveness fails; zero turns the check off
   */
  Health(
      WorkerStatus worker,
      LockStoreFreshness lockStore,
      Duration staleAfter,
      Clock clock,
      LockStoreCalls calls,
      Duration stuckAfter,
      Duration handlerStuckAfter) {
    this.worker = worker;
    this.lockStore = lockStore;
    this.staleAfter = staleAfter;
    this.clock = clock;
    this.calls = calls;
    this.stuckAfter = stuckAfter;
    this.handlerStuckAfter = handlerStuckAfter;
  }

  Verdict liveness() {
    List<String> reasons = new ArrayList<>();
    if (worker.state() == WorkerStatus.State.FAILED) {
      reasons.add(
          "failed: " + worker.failure().map(Throwable::toString).orElse("a subscriber failed"));
    }
    Optional<LockStoreCalls.Call> oldest = calls.oldest();
    if (oldest.isPresent()) {
      LockStoreCalls.Call call = oldest.get();
      Duration age = call.age(calls.clock().instant());
      if (age.compareTo(stuckAfter) > 0) {
        reasons.add(
            "stuck in the lock store: a "
                + call.verb()
                + " call on thread "
                + call.thread()
                + " has been running for "
                + seconds(age)
                + " (stuck after "
                + seconds(stuckAfter)
                + "); "
                + calls.inProgress()
                + " lock-store call(s) in progress");
      }
    }
    if (!handlerStuckAfter.isZero()) {
      Optional<RunningHandler> handler = worker.oldestHandler();
      if (handler.isPresent() && handler.get().age().compareTo(handlerStuckAfter) > 0) {
        RunningHandler h = handler.get();
        reasons.add(
            "stuck in a handler: a delivery of subscription "
                + h.subscription()
                + " on thread "
                + h.thread()
                + " has been running for "
                + seconds(h.age())
                + " (stuck after "
                + seconds(handlerStuckAfter)
                + "); "
                + worker.handlersRunning()
                + " handler(s) running");
      }
    }
    if (reasons.isEmpty()) {
      return new Verdict(true, "alive");
    }
    return new Verdict(false, String.join("; ", reasons));
  }

  Verdict readiness() {
    List<String> reasons = new ArrayList<>();
    switch (worker.state()) {
      case NOT_STARTED -> reasons.add("subscribers not started yet");
      case SUBSCRIBER_DOWN -> reasons.add("a subscriber is not pulling");
      case STOPPING -> reasons.add("stopping");
      case FAILED ->
          reasons.add(
              "failed: " + worker.failure().map(Throwable::toString).orElse("a subscriber failed"));
      case RUNNING -> reasons.addAll(worker.pubsubProblems());
    }
    Instant now = clock.instant();
    Optional<Instant> last = lockStore.lastAnswer();
    String error = lockStore.lastError().map(e -> " (last error: " + e + ")").orElse("");
    String storeLine;
    if (last.isEmpty()) {
      reasons.add("lock store has not answered yet" + error);
      storeLine = null;
    } else {
      Duration age = Duration.between(last.get(), now);
      if (age.compareTo(staleAfter) > 0) {
        reasons.add(
            "lock store has not answered for "
                + seconds(age)
                + " (stale after "
                + seconds(staleAfter)
                + ")"
                + error);
        storeLine = null;
      } else {
        storeLine =
            "lock store answered " + seconds(age.isNegative() ? Duration.ZERO : age) + " ago";
      }
    }
    if (reasons.isEmpty()) {
      return new Verdict(true, "ready: every subscriber is running; " + storeLine);
    }
    return new Verdict(false, "not ready: " + String.join("; ", reasons));
  }

  private static String seconds(Duration d) {
    return String.format(java.util.Locale.ROOT, "%.1fs", d.toMillis() / 1000.0);
  }
}
