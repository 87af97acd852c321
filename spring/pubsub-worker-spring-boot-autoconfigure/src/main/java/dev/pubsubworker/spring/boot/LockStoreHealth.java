package dev.pubsubworker.spring.boot;

import dev.pubsubworker.core.GuardListener;
import dev.pubsubworker.core.InvalidLockRecordException;
import dev.pubsubworker.core.LockAdmin;
import dev.pubsubworker.core.LockBackend;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;

/**
 * Whether the lock store answers: when it last did (a probe's read, or any guard call that
 * returned) and why the last call that failed did. The probe reads one key, {@value #PROBE_KEY},
 * every interval on a daemon thread of its own, so a store that hangs makes the answer go stale
 * instead of blocking the health endpoint; reads never overlap. Without a {@link LockAdmin} (a
 * store of the application's own that has no admin verbs) there is no probe and only the guards'
 * calls tell: the store counts as failing from a failed call until one succeeds.
 *
 * <p>A {@link GuardListener} for every guard and a {@link SmartLifecycle} for the probe.
 * Thread-safe; never throws.
 */
final class LockStoreHealth implements GuardListener, SmartLifecycle {

  /** The key the probe reads (valid on every backend; only read, never written). */
  static final String PROBE_KEY = "pubsub-worker:readiness-probe";

  private static final Logger log = LoggerFactory.getLogger(LockStoreHealth.class);

  private final @Nullable LockAdmin admin;
  private final String store;
  private final Duration interval;
  private final Duration staleAfter;
  private final Clock clock;
  private final AtomicReference<@Nullable Instant> lastAnswer = new AtomicReference<>();
  private volatile @Nullable String lastError;
  private volatile @Nullable Instant lastErrorAt;
  private volatile @Nullable Thread prober;
  private volatile boolean running;
  private boolean lastProbeFailed;

  LockStoreHealth(LockBackend backend, Duration interval, Duration staleAfter, Clock clock) {
    this.admin = backend instanceof LockAdmin a ? a : null;
    this.store = backend.getClass().getSimpleName();
    this.interval = interval;
    this.staleAfter = staleAfter;
    this.clock = clock;
  }

  @Override
  public void backendCall(Verb verb, Duration latency, boolean succeeded) {
    if (succeeded) {
      answered();
    } else {
      failed(verb.name().toLowerCase(Locale.ROOT) + " failed");
    }
  }

  private void failed(String why) {
    lastError = why;
    lastErrorAt = clock.instant();
  }

  /** The store's kind, e.g. {@code RedisLockBackend}. */
  String store() {
    return store;
  }

  /** When the store last answered, if it has. */
  Optional<Instant> lastAnswer() {
    return Optional.ofNullable(lastAnswer.get());
  }

  /** Why the store counts as not answering, or empty if it answered within {@code stale-after}. */
  Optional<String> problem() {
    Instant last = lastAnswer.get();
    String error = lastError;
    if (admin == null) {
      // No probe: only the guards' calls tell, so an idle store is no problem; one whose last call
      // failed (and has not answered since) is.
      Instant failedAt = lastErrorAt;
      return failedAt != null && (last == null || failedAt.isAfter(last))
          ? Optional.of("the lock store's last call failed (" + error + ")")
          : Optional.empty();
    }
    if (last == null) {
      return Optional.of(
          "the lock store has not answered yet" + (error == null ? "" : " (" + error + ")"));
    }
    Duration age = Duration.between(last, clock.instant());
    if (age.compareTo(staleAfter) < 0) {
      return Optional.empty();
    }
    return Optional.of(
        "the lock store has not answered for "
            + age.toSeconds()
            + "s"
            + (error == null ? "" : " (" + error + ")"));
  }

  /** Whether a probe reads the store (it has admin verbs). */
  boolean probes() {
    return admin != null;
  }

  private void answered() {
    Instant now = clock.instant();
    lastAnswer.accumulateAndGet(now, (a, b) -> a == null || b.isAfter(a) ? b : a);
  }

  /** One read. Never throws. */
  void probeOnce() {
    LockAdmin a = admin;
    if (a == null) {
      return;
    }
    try {
      try {
        a.inspect(PROBE_KEY);
      } catch (InvalidLockRecordException unreadable) {
        // The store answered; what it holds under the probe's key does not matter here.
      }
      answered();
      if (lastProbeFailed) {
        log.info("lock store answers the health probe again");
      }
      lastProbeFailed = false;
    } catch (RuntimeException e) {
      String why = e.getMessage() == null ? e.getClass().getName() : e.getMessage();
      failed("probe failed: " + why.lines().findFirst().orElse(""));
      if (!running) {
        log.debug("lock store health probe stopped during a read: {}", why);
      } else if (!lastProbeFailed) {
        log.warn("lock store health probe failed: {}", why, e);
      }
      lastProbeFailed = true;
    }
  }

  @Override
  public synchronized void start() {
    if (running || admin == null) {
      return;
    }
    running = true;
    Thread t =
        new Thread(
            () -> {
              while (running) {
                probeOnce();
                try {
                  Thread.sleep(Math.max(1, interval.toMillis()));
                } catch (InterruptedException e) {
                  return;
                }
              }
            },
            "pubsub-worker-lock-store-probe");
    t.setDaemon(true);
    prober = t;
    t.start();
  }

  /** Stops probing without waiting: a read in progress is interrupted. */
  @Override
  public synchronized void stop() {
    running = false;
    Thread t = prober;
    if (t != null) {
      t.interrupt();
    }
    prober = null;
  }

  @Override
  public boolean isRunning() {
    return running;
  }
}
