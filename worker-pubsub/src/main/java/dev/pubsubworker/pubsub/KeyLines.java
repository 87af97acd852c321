package dev.pubsubworker.pubsub;

import dev.pubsubworker.core.DurationText;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.DoubleSupplier;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where deliveries wait: one FIFO line per key, parking, their timers and deadlines, and the
 * backoff of a parked delivery's retries.
 *
 * <p>A delivery {@link #join joins} its key's line when it arrives. The first heads the line and
 * runs at once; later ones queue behind it with no store call. When the head finds the key held by
 * another claim it {@link #park parks}: it holds no thread, and a timer hands its retry to a
 * handler thread after a {@link ParkBackoff} delay (never later than the holder's lease expiry plus
 * jitter). When the head is settled it {@link #leave leaves}, and the next one's turn is handed to
 * a handler thread. Each waiting delivery has its own deadline, {@code maxWait} after it began to
 * wait: a queued one past it is settled {@link Outcome#PARKED_TIMEOUT} by its own timer, a parked
 * one when its retry finds the key still held. {@link #stop} takes every waiting delivery out, for
 * the caller to settle. At most one INFO line per parked delivery.
 *
 * <p>Settling and running are the caller's ({@link Turns}); every call into it is made without this
 * object's lock held. Thread-safe.
 */
final class KeyLines {

  /** What the lines ask of their owner. */
  interface Turns {
    /** {@code d}'s turn came: run it on the calling (handler) thread. */
    void run(Delivery d);

    /**
     * Settles {@code d} with {@code outcome} and, if it is in a line, calls {@link #leave}.
     *
     * @return true if this call settled it
     */
    boolean settle(Delivery d, Outcome outcome);
  }

  /** Where a delivery is; guarded by the lines' lock. */
  private enum State {
    /** On a handler thread (or about to be: the first run, on the receiver's thread). */
    RUNNING,
    /** In its line behind the head, waiting for it to settle. */
    QUEUED,
    /** The line's head, waiting for its retry (on the timer or for a handler thread). */
    PARKED,
    /** Out of its line: settled, or about to be by whoever moved it here. */
    DONE
  }

  /** One delivery's place in its line; guarded by the lines' lock. */
  private static final class Place {
    final Delivery delivery;
    final String line;
    State state = State.RUNNING;
    long waitStartedMillis = -1;
    long deadlineMillis;
    int polls;
    boolean logged;
    boolean waiting;
    @Nullable Future<?> timer;

    Place(Delivery delivery, String line) {
      this.delivery = delivery;
      this.line = line;
    }

    boolean waited() {
      return waitStartedMillis >= 0;
    }
  }

  private static final Logger log = LoggerFactory.getLogger(KeyLines.class);

  private final String subscription;
  private final Duration maxWait;
  private final ScheduledExecutorService timer;
  private final Executor handlers;
  private final Clock clock;
  private final DoubleSupplier random;
  private final UnaryOperator<String> keyLogFormat;
  private final ReceiverListener listener;
  private final Turns turns;

  /** Each line: the head (running or parked) first, then the queued deliveries. */
  private final Map<String, Deque<Place>> lines = new HashMap<>();

  /** The place of every delivery in a line. */
  private final Map<Delivery, Place> places = new HashMap<>();

  // Guarded by lines.
  private boolean stopping;

  /**
   * @param subscription names the receiver in log lines and to the listener
   * @param maxWait how long a delivery may wait in all; positive
   * @param timer schedules retries and deadlines; its tasks only hand work over
   * @param handlers runs a retry or the next delivery of a line
   * @param clock deadlines and lease expiries are measured on it
   * @param random numbers in [0, 1) for the backoff's jitter
   * @param keyLogFormat how keys appear in log lines
   * @param listener told how many deliveries wait
   * @param turns runs and settles deliveries
   */
  KeyLines(
      String subscription,
      Duration maxWait,
      ScheduledExecutorService timer,
      Executor handlers,
      Clock clock,
      DoubleSupplier random,
      UnaryOperator<String> keyLogFormat,
      ReceiverListener listener,
      Turns turns) {
    this.subscription = subscription;
    this.maxWait = maxWait;
    this.timer = timer;
    this.handlers = handlers;
    this.clock = clock;
    this.random = random;
    this.keyLogFormat = keyLogFormat;
    this.listener = listener;
    this.turns = turns;
  }

  /**
   * Puts {@code d} at the end of {@code line}.
   *
   * @param line its line: its lock key, or its ordering key's line (see {@link DeliveryKeys})
   * @return true if it heads the line, or joined none because the lines are stopping: run it now;
   *     false if it was queued behind the head (its turn is handed over later)
   */
  boolean join(Delivery d, String line) {
    synchronized (lines) {
      if (stopping) {
        return true; // the stopping receiver refuses it
      }
      Place p = new Place(d, line);
      places.put(d, p);
      Deque<Place> deque = lines.get(line);
      if (deque == null) {
        deque = new ArrayDeque<>();
        deque.add(p);
        lines.put(line, deque);
        return true;
      }
      deque.addLast(p);
      p.state = State.QUEUED;
      startWaiting(p);
      p.timer = schedule(() -> queuedTimedOut(p), maxWait);
    }
    String key = d.lockKey();
    log.debug(
        "message {} (key {}) queued behind an earlier delivery of its {} in this process",
        d.message().messageId(),
        key == null ? "?" : keyLogFormat.apply(key),
        line.equals(key) ? "key" : "ordering key");
    return false;
  }

  /** Whether {@code d} is in a line (so that it can park). */
  boolean inLine(Delivery d) {
    synchronized (lines) {
      return places.containsKey(d);
    }
  }

  /**
   * Parks {@code d}, a line's head whose key another claim holds, until its next retry.
   *
   * @param heldUntil the holder's lease expiry, if known
   * @return null if parked (nothing to settle now), else the outcome to settle it with: {@link
   *     Outcome#PARKED_TIMEOUT} past its deadline, {@link Outcome#REFUSED_AT_SHUTDOWN} once
   *     stopping
   */
  @Nullable Outcome park(Delivery d, @Nullable Instant heldUntil) {
    Place p;
    boolean timedOut;
    synchronized (lines) {
      p = places.get(d);
      if (stopping || p == null) {
        return Outcome.REFUSED_AT_SHUTDOWN;
      }
      if (!p.waited()) {
        startWaiting(p);
      }
      timedOut = clock.millis() >= p.deadlineMillis;
    }
    String key = keyForLog(d);
    if (timedOut) {
      log.warn(
          "message {} waited {} (in-progress-max-wait) for key {}, still held by another claim"
              + " until {}; nacked for a later retry (attempt {})",
          d.message().messageId(),
          DurationText.of(maxWait),
          key,
          heldUntil == null ? "?" : heldUntil,
          InboundMessages.attemptText(d.message()));
      return Outcome.PARKED_TIMEOUT;
    }
    boolean first;
    Duration delay;
    synchronized (lines) {
      if (stopping) {
        return Outcome.REFUSED_AT_SHUTDOWN;
      }
      long now = clock.millis();
      Duration untilExpiry =
          heldUntil == null ? null : Duration.ofMillis(heldUntil.toEpochMilli() - now);
      delay =
          ParkBackoff.delay(
              p.polls++,
              untilExpiry,
              Duration.ofMillis(p.deadlineMillis - now),
              random.getAsDouble());
      p.state = State.PARKED;
      setWaiting(p, true);
      first = !p.logged;
      p.logged = true;
      p.timer = schedule(() -> handOver(p), delay);
    }
    if (first) {
      log.info(
          "key {} is held by another claim until {}; message {} (attempt {}) parked: its claim is"
              + " retried until the lease ends, for at most {}",
          key,
          heldUntil == null ? "?" : heldUntil,
          d.message().messageId(),
          InboundMessages.attemptText(d.message()),
          DurationText.of(maxWait));
    } else {
      log.debug(
          "key {} still held; message {} retries its claim in {}",
          key,
          d.message().messageId(),
          delay);
    }
    return null;
  }

  /** How long {@code d} has waited so far, or empty if it never waited (or is in no line). */
  Optional<Duration> waited(Delivery d) {
    long started;
    synchronized (lines) {
      Place p = places.get(d);
      if (p == null || !p.waited()) {
        return Optional.empty();
      }
      started = p.waitStartedMillis;
    }
    return Optional.of(Duration.ofMillis(Math.max(0, clock.millis() - started)));
  }

  /**
   * Takes {@code d} (settled) out of its line and hands the line to the next delivery, if any. A
   * delivery in no line is left alone.
   */
  void leave(Delivery d) {
    Place next;
    synchronized (lines) {
      Place p = places.remove(d);
      if (p == null) {
        return;
      }
      done(p);
      Deque<Place> deque = lines.get(p.line);
      if (deque == null || !deque.remove(p)) {
        return;
      }
      next = deque.peekFirst();
      if (next == null) {
        lines.remove(p.line);
        return;
      }
      // The next one heads the line now: its own deadline still applies when it finds the key
      // held; until a handler thread takes it, it waits (and a stop releases it) like a parked one.
      cancelTimer(next);
      next.state = State.PARKED;
    }
    handOver(next);
  }

  /**
   * Stops: every later {@link #join} joins no line and every {@link #park} refuses; every waiting
   * delivery (parked or queued) is taken out of its line and settled {@link
   * Outcome#REFUSED_AT_SHUTDOWN} through {@link Turns#settle}. Running heads stay until they leave.
   *
   * @return how many deliveries this settled
   */
  int stop() {
    List<Delivery> released = new ArrayList<>();
    synchronized (lines) {
      stopping = true;
      for (Iterator<Deque<Place>> it = lines.values().iterator(); it.hasNext(); ) {
        Deque<Place> deque = it.next();
        for (Iterator<Place> li = deque.iterator(); li.hasNext(); ) {
          Place p = li.next();
          if (p.state == State.QUEUED || p.state == State.PARKED) {
            done(p);
            li.remove();
            released.add(p.delivery);
          }
        }
        if (deque.isEmpty()) {
          it.remove();
        }
      }
    }
    int settled = 0;
    for (Delivery d : released) {
      // Its place stays until the settle, so the settle reports how long it waited.
      settled += turns.settle(d, Outcome.REFUSED_AT_SHUTDOWN) ? 1 : 0;
    }
    return settled;
  }

  /** How many deliveries wait right now (parked or queued). */
  int waiting() {
    synchronized (lines) {
      int n = 0;
      for (Place p : places.values()) {
        n += p.waiting ? 1 : 0;
      }
      return n;
    }
  }

  /** Runs a line's waiting head on a handler thread. */
  private void handOver(Place p) {
    try {
      handlers.execute(() -> resume(p));
    } catch (RejectedExecutionException e) {
      // The handler threads are gone: the subscriber is stopping.
      boolean mine;
      synchronized (lines) {
        mine = p.state == State.PARKED;
        if (mine) {
          p.state = State.RUNNING;
        }
      }
      if (mine) {
        turns.settle(p.delivery, Outcome.REFUSED_AT_SHUTDOWN);
      }
    }
  }

  /** A waiting head's turn, on a handler thread: runs it unless a stop released it meanwhile. */
  private void resume(Place p) {
    synchronized (lines) {
      if (p.state != State.PARKED) {
        return;
      }
      p.state = State.RUNNING;
      setWaiting(p, false);
      p.timer = null;
    }
    turns.run(p.delivery);
  }

  /** A queued delivery's deadline passed before its turn came: settled, out of its line. */
  private void queuedTimedOut(Place p) {
    synchronized (lines) {
      if (p.state != State.QUEUED) {
        return;
      }
      done(p);
      p.timer = null;
      Deque<Place> deque = lines.get(p.line);
      if (deque != null) {
        deque.remove(p);
      }
    }
    if (turns.settle(p.delivery, Outcome.PARKED_TIMEOUT)) {
      log.warn(
          "message {} (key {}) waited {} (in-progress-max-wait) behind an earlier delivery in this"
              + " process; nacked for a later retry (attempt {})",
          p.delivery.message().messageId(),
          keyForLog(p.delivery),
          DurationText.of(maxWait),
          InboundMessages.attemptText(p.delivery.message()));
    }
  }

  /** Starts {@code p}'s wait and deadline; guarded by lines. */
  private void startWaiting(Place p) {
    p.waitStartedMillis = clock.millis();
    p.deadlineMillis = p.waitStartedMillis + maxWait.toMillis();
    setWaiting(p, true);
  }

  /** Marks {@code p} settled or about to be: no longer waiting, its timer cancelled. */
  private void done(Place p) {
    p.state = State.DONE;
    setWaiting(p, false);
    cancelTimer(p);
  }

  private static void cancelTimer(Place p) {
    Future<?> t = p.timer;
    if (t != null) {
      t.cancel(false);
      p.timer = null;
    }
  }

  private void setWaiting(Place p, boolean waiting) {
    if (p.waiting != waiting) {
      p.waiting = waiting;
      listener.parked(subscription, waiting ? 1 : -1);
    }
  }

  private Future<?> schedule(Runnable task, Duration delay) {
    return timer.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
  }

  private String keyForLog(Delivery d) {
    String key = d.lockKey();
    return key == null ? "?" : keyLogFormat.apply(key);
  }
}
