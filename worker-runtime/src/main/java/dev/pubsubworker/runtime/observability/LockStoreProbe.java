package dev.pubsubworker.runtime.observability;

import com.google.common.util.concurrent.AbstractExecutionThreadService;
import dev.pubsubworker.core.InvalidLockRecordException;
import dev.pubsubworker.core.LockAdmin;
import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads one key from the lock store every interval, so readiness knows the store answers even when
 * no message flows. The key, {@value #KEY}, is valid on every backend (Datastore reserves names
 * like {@code __x__}); the probe only reads it. Each read is timed as lock-store verb {@value
 * MetricNames#INSPECT}.
 *
 * <p>A Guava {@link com.google.common.util.concurrent.Service} on one daemon thread, created by
 * {@link #start} and ended by {@link #stop}; a read that hangs delays the next one (reads never
 * overlap), so readiness goes stale as it should.
 */
final class LockStoreProbe extends AbstractExecutionThreadService {

  /** The key the probe reads. */
  static final String KEY = "pubsub-worker:readiness-probe";

  private static final Logger log = LoggerFactory.getLogger(LockStoreProbe.class);

  private final Supplier<LockAdmin> admin;
  private final Duration interval;
  private final LockStoreFreshness freshness;
  private final WorkerMetrics metrics;
  private volatile Thread reader;
  private boolean lastFailed;

  LockStoreProbe(
      Supplier<LockAdmin> admin,
      Duration interval,
      LockStoreFreshness freshness,
      WorkerMetrics metrics) {
    this.admin = admin;
    this.interval = interval;
    this.freshness = freshness;
    this.metrics = metrics;
  }

  /**
   * Probes now, then every interval.
   *
   * @throws IllegalStateException if already started or stopped
   */
  void start() {
    startAsync().awaitRunning();
  }

  /**
   * Stops probing, without waiting: no read starts after it returns, a read in progress is
   * interrupted, and its failure (say, the store closing under it) is logged at DEBUG only. So the
   * worker can close the store right after. Idempotent.
   */
  void stop() {
    stopAsync();
  }

  @Override
  protected void run() {
    reader = Thread.currentThread();
    while (isRunning()) {
      probeOnce();
      try {
        Thread.sleep(Math.max(1, interval.toMillis()));
      } catch (InterruptedException e) {
        return; // stop() interrupts; the state is already STOPPING
      }
    }
  }

  /** Interrupts the read or the wait in progress; {@link #run} then returns. */
  @Override
  protected void triggerShutdown() {
    Thread t = reader;
    if (t != null) {
      t.interrupt();
    }
  }

  @Override
  protected Executor executor() {
    return command -> {
      Thread t = new Thread(command, serviceName());
      t.setDaemon(true);
      t.start();
    };
  }

  @Override
  protected String serviceName() {
    return "pubsub-worker-lock-store-probe";
  }

  /** One read. Never throws: a scheduled task that threw would end the schedule. */
  void probeOnce() {
    if (!isRunning()) {
      return;
    }
    long started = System.nanoTime();
    try {
      try {
        admin.get().inspect(KEY);
      } catch (InvalidLockRecordException unreadable) {
        // The store answered; what it holds under the probe's key is no matter for readiness.
      }
      metrics.lockStoreCall(MetricNames.INSPECT, elapsed(started), true);
      freshness.answered();
      if (lastFailed) {
        log.info("lock store answers the readiness probe again");
      }
      lastFailed = false;
    } catch (RuntimeException thrown) {
      // Opening the store goes through Guice, which wraps the store's own error.
      RuntimeException e =
          thrown instanceof com.google.inject.ProvisionException
                  && thrown.getCause() instanceof RuntimeException cause
              ? cause
              : thrown;
      metrics.lockStoreCall(MetricNames.INSPECT, elapsed(started), false);
      String why = e.getMessage() == null ? e.getClass().getName() : e.getMessage();
      freshness.failed("probe failed: " + why.lines().findFirst().orElse(""));
      if (!isRunning()) {
        log.debug("lock store readiness probe stopped during a read: {}", why);
      } else if (!lastFailed) {
        log.warn("lock store readiness probe failed: {}", why, e);
      }
      lastFailed = true;
    }
  }

  private static Duration elapsed(long started) {
    return Duration.ofNanos(System.nanoTime() - started);
  }
}
