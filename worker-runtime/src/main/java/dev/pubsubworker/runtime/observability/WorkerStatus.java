package dev.pubsubworker.runtime.observability;

import dev.pubsubworker.runtime.pubsub.SubscriptionSet;
import dev.pubsubworker.runtime.worker.Worker;
import java.util.Optional;

/** What health needs to know about a worker: where it is in its life. Thread-safe. */
interface WorkerStatus {

  /** A worker's state, as health sees it. */
  enum State {
    /** Created; the subscribers are not pulling yet. */
    NOT_STARTED,
    /** Every subscriber is pulling. */
    RUNNING,
    /**
     * Started, but a subscriber is not running: the stop has stopped it (a worker does not say it
     * is stopping once its subscribers are down), or it is failing.
     */
    SUBSCRIBER_DOWN,
    /** A graceful stop is under way and the subscribers have not stopped yet. */
    STOPPING,
    /** A subscriber failed and the worker stopped itself. */
    FAILED
  }

  State state();

  /** Why the worker failed, when {@link #state()} is {@link State#FAILED}. */
  Optional<Throwable> failure();

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
        if (worker.isReady()) {
          return State.RUNNING;
        }
        // isReady() is false while stopping or while a subscriber is down.
        return subs.get().allRunning() ? State.STOPPING : State.SUBSCRIBER_DOWN;
      }

      @Override
      public Optional<Throwable> failure() {
        return worker.failure();
      }
    };
  }
}
