package dev.pubsubworker.core;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Group commit of one store verb: concurrent callers' requests go to the store in one round trip.
 *
 * <p>Up to a limit of flushes (single or batch) are in flight at once. A caller that finds fewer in
 * flight leads: it sends its own request alone, through the single verb, so a lone caller pays no
 * added latency (no timer, no batch of one), and callers on a store whose round trips overlap are
 * not held back. Callers that arrive while {@code maxInFlight} flushes are in flight queue up and
 * wait. When a flush ends and callers are queued, its leader takes what is queued as one batch: up
 * to {@code maxBatch} entries with distinct keys, oldest first (an entry whose key is already in
 * the batch stays queued for the next one), and hands the lead of it to its oldest caller, which
 * sends it through the batch verb, or through the single verb if it holds one entry; otherwise the
 * flush's slot is freed. Each queued caller waits for at most one flush to end before its own is
 * sent. Two flushes in flight at once may hold the same key (as two concurrent single verbs may);
 * one batch never does.
 *
 * <p>The limit adapts to the store, between {@code minInFlight} and {@code maxInFlight}, over
 * periods of at least {@link #PERIOD_FLUSHES} flushes and {@link #PERIOD_NANOS}. Only periods in
 * which callers queued count: otherwise the limit bounded nothing. What decides first is
 * throughput: the coalescer keeps, for each limit it has run at lately (the last {@link
 * #RATE_FRESH_PERIODS} counted periods), the entries per second that got through, averaged over its
 * periods. While another limit measured over at least two of them got more than {@link
 * #RATE_MARGIN} more through than the current one, the limit steps towards it, one per period.
 * Otherwise two rules propose a step. From the round-trip times (as TCP Vegas sizes a congestion
 * window): {@code minRtt} is the shortest flush seen lately (the store unloaded), and {@code limit
 * * (1 - minRtt / meanRtt)} estimates how many of the flushes in flight were waiting at the store
 * rather than being served; fewer than {@link #GROW_BELOW} waiting — the store serves overlapping
 * round trips side by side (a pipelined connection, a pool, a network's latency) — proposes one
 * more, so that callers send their own verb instead of waiting for a round trip to end; more than
 * {@link #SHRINK_ABOVE} — the store is the bottleneck — proposes one fewer, so that callers queue
 * and share the next round trip, which saves the store work (a commit, a parse). And from how many
 * entries the flushes hold (an average over recent periods): while it is below {@link #FEW_SHARED},
 * queueing only makes a caller wait a round trip to be sent nearly alone, and one more is proposed
 * whatever the round trips; one fewer is proposed only while it is at least {@link #SHARED}. A
 * proposed step is taken unless that limit got clearly less through lately (by the same margin).
 * When neither rule proposes a step and a neighbouring limit has not been measured lately, the
 * limit moves there for a period, so that every figure it compares stays current. Each limit is
 * measured over two periods before it is left. Round-trip times and sharing alone cannot tell a
 * store that serves more when given more while each round trip lengthens (PostgreSQL on few cores,
 * sharing one log flush between concurrent commits) from one where every round trip in flight costs
 * the others (its CPU is the bottleneck, and flushes of one entry each cost it a whole statement
 * and commit): only the throughput measured at each limit does, and with it the limit stays where
 * the most got through, within the margin. The shortest round trip is taken afresh every {@link
 * #RTT_WINDOW} flushes, so a store that became slower for good (a longer network path) is measured
 * against its new floor. With {@code minInFlight == maxInFlight} the limit is fixed.
 *
 * <p>Each entry fails exactly as its single verb would: an entry's own failure is that verb's
 * exception. A batch the store refuses as a whole for what it was asked ({@link
 * StoreRefusedException}: it is up, and may have refused the statement because of one entry — a
 * constraint of the table, a value it cannot take) does not fail its entries: each is handed back
 * to its own caller, which sends it through the single verb at once, side by side with the others,
 * so only the entry the store refuses on its own fails, and its batch-mates pay one more round
 * trip, not a wait behind each other. Both verbs may be sent again safely: a claim with the same
 * token re-affirms the claim it may have made, a complete of the same claim finds it DONE. A round
 * trip that fails as a whole for any other reason (the store unreachable, a timeout, retries spent)
 * fails every entry with a {@link LockBackendException} carrying the failure (its outcome unknown,
 * as for a failed single verb), since sending each again would make its caller wait out the same
 * trouble twice.
 *
 * <p>Requests sent with {@link #submitAsync} have no caller waiting: the caller returns at once and
 * the entry's outcome completes a stage. Such an entry never leads; a batch of them is sent by the
 * thread that passes the slot on (it has just ended a flush), or, when that thread must not or has
 * sent enough for others, by the coalescer's own flusher thread (one, started when needed). A
 * refused batch's unwaited entries are sent alone by the thread that sent the batch.
 *
 * <p>Interrupts: with {@code interruptible}, a caller interrupted while its entry is still queued
 * leaves the queue (nothing was sent) and gets a {@link LockBackendException}; one interrupted
 * while its entry is in flight gives the entry up, and whoever delivers a result to a given-up
 * entry passes it to {@code onAbandoned} (for a claim: release a won claim, so the key is not held
 * by a claim nobody runs). A caller that has been handed the lead always leads (its interrupt is
 * restored afterwards), so the queue never stalls. Without {@code interruptible}, a caller waits
 * for its result whatever happens and restores its interrupt status before returning. In every case
 * the caller's interrupt status is set again when it returns or throws.
 *
 * <p>Thread-safe.
 *
 * @param <Q> the request type
 * @param <R> the result type
 */
final class Coalescer<Q, R> {

  private static final Logger log = LoggerFactory.getLogger(IdempotencyGuard.class);

  /** The verbs one coalescer drives. */
  interface Verbs<Q, R> {
    /** The single verb, for a lone request. */
    R single(Q request);

    /**
     * The single verb without waiting ({@link #submitAsync}); the default runs {@link #single} on
     * the calling thread.
     */
    default CompletionStage<R> singleAsync(Q request) {
      try {
        return CompletableFuture.completedFuture(single(request));
      } catch (RuntimeException e) {
        return CompletableFuture.failedFuture(e);
      }
    }

    /** The batch verb: one result per request, in order. */
    List<BatchLockBackend.BatchResult<R>> batch(List<Q> requests);

    /** The key of a request: no two entries of one batch share it. */
    String key(Q request);
  }

  private static final int WAITING = 0;
  private static final int LEAD = 1;
  private static final int IN_FLIGHT = 2;
  private static final int DONE = 3;
  private static final int GIVEN_UP = 4;

  /** Handed back by a batch the store refused ({@link StoreRefusedException}): sent alone. */
  private static final int ALONE = 5;

  private final Verbs<Q, R> verbs;
  private final int maxBatch;
  private final boolean interruptible;
  private final BiConsumer<Q, R> onAbandoned;
  private final GuardListener.Verb verb;
  private final GuardEvents events;

  /** Grow the limit when fewer flushes than this waited at the store, on average. */
  static final double GROW_BELOW = 2.0;

  /** Shrink the limit when more flushes than this waited at the store, on average. */
  static final double SHRINK_ABOVE = 4.0;

  /**
   * Grow the limit when flushes have lately held fewer entries than this on average, whatever the
   * round trips: callers queued, but few of them shared a flush, so queueing saved the store little
   * and cost each queued caller a round trip's wait.
   */
  static final double FEW_SHARED = 1.5;

  /**
   * Shrink the limit only while flushes have lately held at least this many entries on average:
   * callers beyond the limit do share flushes, so one slot fewer makes them share more (rather than
   * making one more caller wait a round trip to be sent alone).
   */
  static final double SHARED = 2.0;

  /** The weight of one period in the average of entries per flush. */
  static final double SHARING_WEIGHT = 0.25;

  /**
   * A period of the limit's adaptation lasts at least this long, and at least {@link
   * #PERIOD_FLUSHES} and {@code limit} flushes.
   */
  static final long PERIOD_NANOS = 10_000_000;

  /** A period of the limit's adaptation holds at least this many flushes. */
  static final int PERIOD_FLUSHES = 16;

  /**
   * A limit whose throughput was measured in the last this many periods in which callers queued
   * counts as measured; an older figure is measured afresh before it decides anything.
   */
  static final int RATE_FRESH_PERIODS = 32;

  /**
   * How much more throughput than the current limit's another limit must have shown to count as
   * better (0.2: 20 %): smaller differences are taken as noise.
   */
  static final double RATE_MARGIN = 0.20;

  /** The weight of one period in a limit's average throughput. */
  static final double RATE_WEIGHT = 0.5;

  /** How many batches in a row a thread that ended a flush sends for queued callers itself. */
  static final int MAX_SENT_FOR_OTHERS = 2;

  /**
   * A flush that took longer than this many times the shortest recent one is slow (the store is in
   * trouble): its thread hands the next batch to a queued caller instead of sending it, so that its
   * own caller does not wait out a second slow round trip.
   */
  static final long SLOW_FLUSH_FACTOR = 8;

  /** How many flushes one measure of the shortest round trip spans. */
  static final int RTT_WINDOW = 1000;

  /**
   * Sends the batches in which no caller waits to lead ({@link #sendUnled}): one daemon thread,
   * started when needed and gone after 30 s idle.
   */
  private final ThreadPoolExecutor flusher;

  private final Object lock = new Object();
  private final ArrayDeque<Entry<Q, R>> queue = new ArrayDeque<>();
  private final int minInFlight;
  private final int maxInFlight;

  /** Flushes in flight, or taken and handed to a leader not yet running; guarded by lock. */
  private int inFlight;

  /** How many flushes may be in flight before callers queue; guarded by lock. */
  private int limit;

  // Round-trip statistics of the flushes, all guarded by lock.
  private long minRtt = Long.MAX_VALUE;
  private long windowMin = Long.MAX_VALUE;
  private int windowFlushes;
  private long periodRttSum;
  private long periodEntries;
  private int periodFlushes;

  /** Entries per flush, averaged over periods ({@link #SHARING_WEIGHT}); guarded by lock. */
  private double sharing = SHARED;

  private boolean queuedInPeriod;

  /** When the current period's first flush began ({@link System#nanoTime}); guarded by lock. */
  private long periodStart;

  /** Periods ended in which callers queued; guarded by lock. */
  private long queuedPeriods;

  /**
   * Entries per second delivered while the limit was {@code i} and callers queued, averaged over
   * such periods ({@link #RATE_WEIGHT}); guarded by lock.
   */
  private final double[] rates;

  /** The value of {@link #queuedPeriods} when {@code rates[i]} was last measured; 0: never. */
  private final long[] ratedAt;

  /** How many periods {@code rates[i]} averages since it was last measured afresh. */
  private final int[] ratedPeriods;

  /** Which way the next probe of an unmeasured neighbouring limit goes first; guarded by lock. */
  private boolean probeUp = true;

  Coalescer(
      Verbs<Q, R> verbs,
      int maxBatch,
      int minInFlight,
      int maxInFlight,
      boolean interruptible,
      BiConsumer<Q, R> onAbandoned,
      GuardListener.Verb verb,
      GuardEvents events) {
    if (maxBatch < 2) {
      throw new IllegalArgumentException("maxBatchSize must be at least 2, but was " + maxBatch);
    }
    if (minInFlight < 1) {
      throw new IllegalArgumentException(
          "maxConcurrentBatches must be at least 1, but was " + minInFlight);
    }
    if (maxInFlight < minInFlight) {
      throw new IllegalArgumentException(
          "maxConcurrentCalls must be at least maxConcurrentBatches ("
              + minInFlight
              + "), but was "
              + maxInFlight);
    }
    this.minInFlight = minInFlight;
    this.maxInFlight = maxInFlight;
    this.limit = minInFlight;
    this.rates = new double[maxInFlight + 1];
    this.ratedAt = new long[maxInFlight + 1];
    this.ratedPeriods = new int[maxInFlight + 1];
    this.verbs = verbs;
    this.maxBatch = maxBatch;
    this.interruptible = interruptible;
    this.onAbandoned = onAbandoned;
    this.verb = verb;
    this.events = events;
    this.flusher =
        new ThreadPoolExecutor(
            0,
            1,
            30,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            r -> {
              Thread t =
                  new Thread(
                      r, "pubsub-worker-group-commit-" + verb.name().toLowerCase(Locale.ROOT));
              t.setDaemon(true);
              return t;
            });
  }

  /** One caller's request and, once delivered, its outcome. */
  private static final class Entry<Q, R> {
    final Q request;
    final Thread caller = Thread.currentThread();
    final AtomicInteger state = new AtomicInteger(WAITING);
    @Nullable R result;
    @Nullable RuntimeException failure;

    /**
     * Where the outcome goes when no thread waits for it ({@link #submitAsync}); null when the
     * caller waits.
     */
    final @Nullable CompletableFuture<R> async;

    /** The batch this entry leads; written before its state turns LEAD. */
    @Nullable List<Entry<Q, R>> batch;

    Entry(Q request, @Nullable CompletableFuture<R> async) {
      this.request = request;
      this.async = async;
    }
  }

  /**
   * Sends {@code request}, alone or in a batch, and returns its result.
   *
   * @throws RuntimeException what the single verb would have thrown for it
   */
  R submit(Q request) {
    Entry<Q, R> entry = new Entry<>(request, null);
    if (leadOrQueue(entry)) {
      List<Entry<Q, R>> alone = new ArrayList<>(1);
      alone.add(entry);
      entry.state.set(IN_FLIGHT);
      flushAndHandOff(alone);
      return outcome(entry, false);
    }
    return await(entry);
  }

  /**
   * Sends {@code request} as {@link #submit} does, without waiting: when fewer flushes are in
   * flight than the limit, it goes out through {@link Verbs#singleAsync}; otherwise it queues, and
   * the batch it joins is sent by whoever passes the next slot on — a waiting caller handed the
   * lead, the thread that ended a flush, or, for a batch in which no caller waits, this coalescer's
   * own flusher thread. Either way this returns at once, unless the single verb runs on the calling
   * thread (a store without an asynchronous client). When an answer comes on the store client's
   * thread, that thread only passes the slot on and never sends, since it must not block.
   *
   * @return a stage with the single verb's result or its failure (a {@link RuntimeException})
   */
  CompletionStage<R> submitAsync(Q request) {
    CompletableFuture<R> result = new CompletableFuture<>();
    Entry<Q, R> entry = new Entry<>(request, result);
    if (!leadOrQueue(entry)) {
      return result;
    }
    Thread caller = Thread.currentThread();
    long started = System.nanoTime();
    CompletionStage<R> sent;
    try {
      sent = verbs.singleAsync(request);
    } catch (RuntimeException e) {
      sent = CompletableFuture.failedFuture(e);
    } catch (Error e) {
      sendUnled(passSlot(System.nanoTime() - started, 1, false));
      throw e;
    }
    sent.whenComplete(
        (value, failure) -> {
          long rtt = System.nanoTime() - started;
          Throwable cause = unwrap(failure);
          boolean onCaller = Thread.currentThread() == caller;
          List<Entry<Q, R>> again =
              passSlot(rtt, 1, onCaller && !(cause instanceof LockBackendException));
          if (cause == null) {
            result.complete(value);
          } else if (cause instanceof RuntimeException || cause instanceof Error) {
            result.completeExceptionally(cause);
          } else {
            result.completeExceptionally(new LockBackendException("store call failed", cause));
          }
          if (again != null) {
            if (onCaller) {
              flushAndHandOff(again, 1);
            } else {
              sendUnled(again);
            }
          }
        });
    return result;
  }

  /**
   * Takes a flush slot for {@code entry} if fewer than the limit are in flight (true: its caller
   * sends it now), else queues it (false: its caller waits).
   */
  private boolean leadOrQueue(Entry<Q, R> entry) {
    synchronized (lock) {
      if (inFlight < limit) {
        inFlight++;
        return true;
      }
      queue.addLast(entry);
      queuedInPeriod = true;
      return false;
    }
  }

  /**
   * The failure inside a stage's wrapping ({@link CompletionException}, {@link
   * ExecutionException}).
   */
  static @Nullable Throwable unwrap(@Nullable Throwable failure) {
    Throwable t = failure;
    while ((t instanceof CompletionException || t instanceof ExecutionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  private R await(Entry<Q, R> entry) {
    boolean interrupted = false;
    while (true) {
      int s = entry.state.get();
      if (s == DONE) {
        return outcome(entry, interrupted);
      }
      if (s == LEAD) {
        List<Entry<Q, R>> batch = Objects.requireNonNull(entry.batch, "batch");
        entry.batch = null;
        entry.state.set(IN_FLIGHT);
        flushAndHandOff(batch);
        return outcome(entry, interrupted);
      }
      if (s == ALONE) {
        entry.state.set(IN_FLIGHT);
        sendAlone(entry);
        return outcome(entry, interrupted);
      }
      LockSupport.park(this);
      if (Thread.interrupted()) {
        interrupted = true;
        if (interruptible && giveUp(entry)) {
          Thread.currentThread().interrupt();
          throw new LockBackendException(
              "interrupted while waiting for a batched "
                  + verb.name().toLowerCase(Locale.ROOT)
                  + "; nothing of it is kept");
        }
      }
    }
  }

  /**
   * Gives the entry up after an interrupt: a queued entry leaves the queue; an entry in flight is
   * marked so its deliverer hands the result to {@code onAbandoned}. False if the entry was handed
   * the lead or its result is already there (the caller then proceeds as usual).
   */
  private boolean giveUp(Entry<Q, R> entry) {
    synchronized (lock) {
      if (entry.state.get() == WAITING && queue.remove(entry)) {
        entry.state.set(GIVEN_UP);
        return true;
      }
    }
    return entry.state.compareAndSet(IN_FLIGHT, GIVEN_UP);
  }

  private R outcome(Entry<Q, R> entry, boolean interrupted) {
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    RuntimeException failure = entry.failure;
    if (failure != null) {
      throw failure;
    }
    // Delivered with a value whenever it carries no failure: no verb of a backend returns null.
    return Objects.requireNonNull(entry.result, "result");
  }

  /**
   * Takes the next batch off the non-empty queue: oldest first, distinct keys, at most {@code
   * maxBatch}. Every entry is marked in flight but the first whose caller waits, which stays
   * waiting: the caller decides to lead it or to send it itself. Under the lock, so an interrupted
   * caller finds its entry either queued, or taken: in flight, or leading (then it leads).
   */
  private List<Entry<Q, R>> takeEntries() {
    List<Entry<Q, R>> batch = new ArrayList<>();
    Set<String> keys = new HashSet<>();
    boolean waiterLeft = false;
    Iterator<Entry<Q, R>> it = queue.iterator();
    while (it.hasNext() && batch.size() < maxBatch) {
      Entry<Q, R> e = it.next();
      if (keys.add(verbs.key(e.request))) {
        it.remove();
        batch.add(e);
        if (e.async == null && !waiterLeft) {
          waiterLeft = true;
        } else {
          e.state.set(IN_FLIGHT);
        }
      }
    }
    return batch;
  }

  /**
   * The entry of a taken batch whose caller waits, left waiting by {@link #takeEntries}; or null.
   */
  private static <Q, R> @Nullable Entry<Q, R> waiter(List<Entry<Q, R>> batch) {
    for (Entry<Q, R> e : batch) {
      if (e.async == null) {
        return e;
      }
    }
    return null;
  }

  /**
   * Sends {@code batch}, then passes its slot on: to nobody when the queue is empty; else the next
   * batch, which this thread — awake already — sends itself up to {@link #MAX_SENT_FOR_OTHERS}
   * times in a row (a woken leader would first have to be scheduled, and that wait, on a loaded
   * machine, is what a chain of batches otherwise pays at every link), and then hands to the oldest
   * queued caller, so that its own caller is not held for long. After a flush that failed or was
   * slow ({@link #SLOW_FLUSH_FACTOR}) it hands the next batch on at once: its own caller has waited
   * out one bad round trip already.
   */
  private void flushAndHandOff(List<Entry<Q, R>> batch) {
    flushAndHandOff(batch, 0);
  }

  /** As {@link #flushAndHandOff(List)}, {@code sentForOthers} batches sent for others already. */
  private void flushAndHandOff(@Nullable List<Entry<Q, R>> batch, int sentForOthers) {
    while (batch != null) {
      long started = System.nanoTime();
      boolean completed = false;
      boolean keep = false;
      List<Entry<Q, R>> again = null;
      try {
        completed = flush(batch);
      } finally {
        keep = completed && sentForOthers < MAX_SENT_FOR_OTHERS;
        again = passSlot(System.nanoTime() - started, batch.size(), keep);
      }
      if (again != null && !keep) {
        // A batch nobody waits to lead, and this thread has sent enough for others.
        sendUnled(again);
        again = null;
      }
      batch = again;
      sentForOthers++;
    }
  }

  /**
   * Passes a flush's slot on once its round trip of {@code rtt} ended: to nobody when the queue is
   * empty; else, if {@code mayKeep} and the flush was not slow, the next batch is returned for the
   * calling thread to send (the slot stays with it); otherwise the next batch's lead is handed to
   * its oldest caller.
   *
   * @return the batch this thread sends next, or null
   */
  private @Nullable List<Entry<Q, R>> passSlot(long rtt, int entries, boolean mayKeep) {
    Entry<Q, R> next = null;
    List<Entry<Q, R>> again = null;
    synchronized (lock) {
      adapt(rtt, entries);
      if (queue.isEmpty()) {
        inFlight--;
      } else {
        List<Entry<Q, R>> batch = takeEntries();
        Entry<Q, R> waiter = waiter(batch);
        if ((mayKeep && rtt <= SLOW_FLUSH_FACTOR * minRtt) || waiter == null) {
          // The slot stays with this thread, for the next batch (or, when no caller of it waits
          // to lead it, with whoever this thread hands it to: sendUnled).
          if (waiter != null) {
            waiter.state.set(IN_FLIGHT);
          }
          again = batch;
        } else {
          // This flush's slot passes to the next batch's leader.
          waiter.batch = batch;
          waiter.state.set(LEAD);
          next = waiter;
        }
      }
    }
    if (next != null) {
      LockSupport.unpark(next.caller);
    }
    return again;
  }

  /**
   * Has this coalescer's flusher thread send {@code batch} (and pass its slot on): for a batch in
   * which no caller waits to lead, taken by a thread that must not send it (the store client's) or
   * has sent enough for others. A no-op for null.
   */
  private void sendUnled(@Nullable List<Entry<Q, R>> batch) {
    if (batch == null) {
      return;
    }
    flusher.execute(
        () -> {
          try {
            flushAndHandOff(batch, 0);
          } catch (RuntimeException | Error e) {
            log.error("the group-commit flusher of {} failed", verb, e);
          }
        });
  }

  /** The current limit of flushes in flight (for tests and benchmarks). */
  int limit() {
    synchronized (lock) {
      return limit;
    }
  }

  /** Takes one flush's round trip into the limit; under the lock. See the class comment. */
  private void adapt(long rtt, int entries) {
    rtt = Math.max(1, rtt);
    windowMin = Math.min(windowMin, rtt);
    minRtt = Math.min(minRtt, rtt);
    if (++windowFlushes >= RTT_WINDOW) {
      minRtt = windowMin;
      windowMin = Long.MAX_VALUE;
      windowFlushes = 0;
    }
    if (minInFlight == maxInFlight) {
      return;
    }
    long now = System.nanoTime();
    if (periodFlushes == 0) {
      // A period is timed from its first flush's start, so that idle time before it is not counted.
      periodStart = now - rtt;
    }
    periodRttSum += rtt;
    periodEntries += entries;
    long elapsed = now - periodStart;
    if (++periodFlushes < Math.max(limit, PERIOD_FLUSHES) || elapsed < PERIOD_NANOS) {
      return;
    }
    double meanRtt = (double) periodRttSum / periodFlushes;
    double waiting = limit * (1 - minRtt / meanRtt);
    sharing += ((double) periodEntries / periodFlushes - sharing) * SHARING_WEIGHT;
    if (queuedInPeriod) {
      // Only while callers queue does the limit bound what gets through.
      limit = nextLimit(periodEntries * 1e9 / elapsed, waiting);
    }
    periodRttSum = 0;
    periodEntries = 0;
    periodFlushes = 0;
    periodStart = now;
    queuedInPeriod = false;
  }

  /**
   * The limit for the next period, after one in which callers queued and {@code rate} entries per
   * second got through, with {@code waiting} flushes waiting at the store on average. See the class
   * comment: throughput measured lately decides first, the round-trip and sharing rules propose, an
   * unmeasured neighbouring limit is probed.
   */
  private int nextLimit(double rate, double waiting) {
    queuedPeriods++;
    if (isFresh(limit)) {
      rates[limit] += (rate - rates[limit]) * RATE_WEIGHT;
      ratedPeriods[limit]++;
    } else {
      rates[limit] = rate;
      ratedPeriods[limit] = 1;
    }
    ratedAt[limit] = queuedPeriods;
    if (!isKnown(limit)) {
      // Every limit is measured over two periods before it is left, so that each is compared.
      return limit;
    }
    double threshold = rates[limit] * (1 + RATE_MARGIN);
    int best = limit;
    for (int l = minInFlight; l <= maxInFlight; l++) {
      if (l != limit && isKnown(l) && rates[l] > threshold && rates[l] > rates[best]) {
        best = l;
      }
    }
    if (best != limit) {
      // Another limit clearly got more through lately: one step towards it.
      return best > limit ? limit + 1 : limit - 1;
    }
    int proposed = limit;
    if (limit < maxInFlight && (waiting < GROW_BELOW || sharing < FEW_SHARED)) {
      proposed = limit + 1;
    } else if (waiting > SHRINK_ABOVE && sharing >= SHARED && limit > minInFlight) {
      proposed = limit - 1;
    }
    if (proposed != limit) {
      // Unless that limit clearly got less through lately.
      boolean worse = isKnown(proposed) && rates[proposed] * (1 + RATE_MARGIN) < rates[limit];
      return worse ? limit : proposed;
    }
    boolean up = limit < maxInFlight && !isFresh(limit + 1);
    boolean down = limit > minInFlight && !isFresh(limit - 1);
    if (up && down) {
      probeUp = !probeUp;
      return probeUp ? limit + 1 : limit - 1;
    }
    return up ? limit + 1 : down ? limit - 1 : limit;
  }

  /** Whether the throughput at limit {@code l} was measured lately; under the lock. */
  private boolean isFresh(int l) {
    return ratedAt[l] > 0 && queuedPeriods - ratedAt[l] < RATE_FRESH_PERIODS;
  }

  /**
   * Whether the throughput at limit {@code l} was measured lately over at least two periods, so
   * that one odd period (a burst of callers at once, a pause of the process) decides nothing.
   */
  private boolean isKnown(int l) {
    return isFresh(l) && ratedPeriods[l] >= 2;
  }

  /**
   * Sends {@code batch} and delivers every entry's result, or hands its entries back to be sent
   * alone. False when the store failed or refused it (the round trip as a whole, or a lone request
   * with a {@link LockBackendException}).
   */
  private boolean flush(List<Entry<Q, R>> batch) {
    if (batch.size() == 1) {
      return sendAlone(batch.get(0));
    }
    List<Q> requests = new ArrayList<>(batch.size());
    for (Entry<Q, R> e : batch) {
      requests.add(e.request);
    }
    long started = System.nanoTime();
    List<BatchLockBackend.BatchResult<R>> results;
    try {
      results = verbs.batch(requests);
      if (results == null || results.size() != requests.size()) {
        throw new LockBackendException(
            "batch returned "
                + (results == null ? "no" : Integer.toString(results.size()))
                + " results for "
                + requests.size()
                + " requests");
      }
    } catch (RuntimeException | Error e) {
      events.batch(verb, batch.size(), Duration.ofNanos(System.nanoTime() - started), false);
      if (e instanceof StoreRefusedException) {
        log.debug(
            "a batched {} of {} entries was refused as a whole; each is sent alone",
            verb,
            batch.size(),
            e);
        handBackAlone(batch);
        return false;
      }
      for (Entry<Q, R> entry : batch) {
        deliver(entry, null, asEntryFailure(e));
      }
      if (e instanceof Error error) {
        throw error;
      }
      return false;
    }
    events.batch(verb, batch.size(), Duration.ofNanos(System.nanoTime() - started), true);
    for (int i = 0; i < batch.size(); i++) {
      BatchLockBackend.BatchResult<R> r = results.get(i);
      if (r == null) {
        deliver(batch.get(i), null, new LockBackendException("batch returned a null entry"));
      } else if (r.isFailure()) {
        deliver(batch.get(i), null, r.failure());
      } else {
        deliver(batch.get(i), r.get(), null);
      }
    }
    return true;
  }

  /**
   * Hands every entry of a refused batch back to its caller, which sends it alone; this thread's
   * own entry, if the batch holds it, is sent here, after the others are on their way. An entry
   * given up by its interrupted caller is dropped: nothing of it is kept, as if it failed.
   */
  private void handBackAlone(List<Entry<Q, R>> batch) {
    Entry<Q, R> own = null;
    List<Entry<Q, R>> unwaited = new ArrayList<>();
    for (Entry<Q, R> entry : batch) {
      if (entry.async != null) {
        unwaited.add(entry);
      } else if (entry.caller == Thread.currentThread()) {
        own = entry;
      } else if (entry.state.compareAndSet(IN_FLIGHT, ALONE)) {
        LockSupport.unpark(entry.caller);
      }
    }
    if (own != null) {
      sendAlone(own);
    }
    // No caller waits for these: this thread sends each alone.
    for (Entry<Q, R> entry : unwaited) {
      sendAlone(entry);
    }
  }

  /**
   * Sends one entry through the single verb and delivers its outcome. False when the store failed
   * ({@link LockBackendException}).
   */
  private boolean sendAlone(Entry<Q, R> entry) {
    try {
      deliver(entry, verbs.single(entry.request), null);
      return true;
    } catch (RuntimeException e) {
      deliver(entry, null, e);
      return !(e instanceof LockBackendException);
    } catch (Error e) {
      deliver(entry, null, new LockBackendException("store call failed", e));
      throw e;
    }
  }

  /**
   * The failure one entry of a failed round trip sees: a store failure as its single verb would
   * throw it, one instance per entry so that callers on different threads never share it.
   */
  private static RuntimeException asEntryFailure(Throwable batchFailure) {
    if (batchFailure instanceof LockBackendException e) {
      return new LockBackendException(String.valueOf(e.getMessage()), e);
    }
    if (batchFailure instanceof IllegalArgumentException e) {
      return new IllegalArgumentException(e.getMessage(), e);
    }
    return new LockBackendException("batched store call failed: " + batchFailure, batchFailure);
  }

  private void deliver(Entry<Q, R> entry, @Nullable R result, @Nullable RuntimeException failure) {
    entry.result = result;
    entry.failure = failure;
    if (entry.state.compareAndSet(IN_FLIGHT, DONE)) {
      CompletableFuture<R> async = entry.async;
      if (async != null) {
        if (failure != null) {
          async.completeExceptionally(failure);
        } else {
          async.complete(result);
        }
      } else if (entry.caller != Thread.currentThread()) {
        LockSupport.unpark(entry.caller);
      }
      return;
    }
    // Given up by an interrupted caller: nobody will act on this result.
    if (failure == null) {
      try {
        onAbandoned.accept(entry.request, result);
      } catch (RuntimeException e) {
        log.warn(
            "settling a batched {} whose caller was interrupted failed; it lapses with its lease",
            verb,
            e);
      }
    }
  }
}
