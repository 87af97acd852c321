package dev.pubsubworker.runtime.observability;

import dev.pubsubworker.runtime.pubsub.RunningHandler;
import dev.pubsubworker.runtime.pubsub.SubscriptionSet;
import dev.pubsubworker.runtime.worker.Worker;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/** What health needs to know about a worker: where it is in its life. Thread-safe. */
interface WorkerStatus {

  /** A worker's state, as health sees it. */
  enum State {
    /** Created; the subscribers are not pulling yet. */
    NOT_STARTED,
    /** Every subscriber is pulling. */
    RUNNING,
    /** Started and not stopping, but a subscriber is not running: it is failing. */
    SUBSCRIBER_DOWN,
    /** A graceful stop is under way (or done). */
    STOPPING,
    /** A subscriber failed and the worker stopped itself. */
    FAILED
  }

  State state();

  /** Why the worker failed, when {@link #state()} is {@link State#FAILED}. */
  Optional<Throwable> failure();

  /** Why some subscription's streaming pull is down, one line each; empty if none is. */
  default List<String> pubsubProblems() {
    return List.of();
  }

  /** The delivery in progress on a handler thread the longest, if any is. */
  default Optional<RunningHandler> oldestHandler() {
    return Optional.empty();
  }

  /** How long subscription {@code id}'s oldest delivery in progress has been running, if any. */
  default Optional<Duration> oldestHandlerAge(String id) {
    return Optional.empty();
  }

  /** How many deliveries are in progress on handler threads. */
  default int handlersRunning() {
    return 0;
  }

  /** The status of a real worker. */
  static WorkerStatus of(Worker worker) {
    return new WorkerStatus() {
      @Override
      public State state() {
        if (worker.failure().isPresent()) {
          return State.FAILED;
        }
        Optional<SubscriptionSet> subs = worker.subscriptions();
        if (subs.isEmpty()) {
          return State.NOT_STARTED;
        }
        if (worker.isStopping()) {
          return State.STOPPING;
        }
        return worker.isReady() ? State.RUNNING : State.SUBSCRIBER_DOWN;
      }

      @Override
      public Optional<Throwable> failure() {
        return worker.failure();
      }

      @Override
      public List<String> pubsubProblems() {
        return worker.pubsubProblems();
      }

      @Override
      public Optional<RunningHandler> oldestHandler() {
        return worker.oldestHandler();
      }

      @Override
      public Optional<Duration> oldestHandlerAge(String id) {
        return worker.subscriptions().flatMap(s -> s.oldestHandlerAge(id));
      }

      @Override
      public int handlersRunning() {
        return worker.subscriptions().map(SubscriptionSet::inFlight).orElse(0);
      }
    };
  }
}
