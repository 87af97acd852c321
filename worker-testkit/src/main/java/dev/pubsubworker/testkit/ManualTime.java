package dev.pubsubworker.testkit;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.PriorityQueue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.Delayed;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Time that moves only when a test says so: a {@link Clock} and a {@link ScheduledExecutorService}
 * that share one manual timeline. Scheduled tasks run on the thread that calls {@link #advance}, in
 * due-time order, each with the clock set to its due time; a task scheduled by a task runs in the
 * same advance if it falls due within it.
 *
 * <p>Use it to test lease heartbeats without sleeping: hand {@link #clock()} to the backend and the
 * guard, {@link #scheduler()} to the guard, run the work on another thread, and advance. Thread-
 * safe.
 */
public final class ManualTime {

  private final Object lock = new Object();
  private final PriorityQueue<Task<?>> queue = new PriorityQueue<>();
  private final AtomicLong sequence = new AtomicLong();
  private final Scheduler scheduler = new Scheduler();
  private volatile Instant now;

  /** Time starting at 2030-01-01T00:00:00Z. */
  public ManualTime() {
    this(Instant.parse("2030-01-01T00:00:00Z"));
  }

  /** Time starting at {@code start}. */
  public ManualTime(Instant start) {
    this.now = Objects.requireNonNull(start, "start");
  }

  /** The current manual instant. */
  public Instant now() {
    return now;
  }

  /** A clock that reads the manual instant (UTC). */
  public Clock clock() {
    return new ManualClock(ZoneOffset.UTC);
  }

  /** A scheduler whose tasks run only inside {@link #advance}. */
  public ScheduledExecutorService scheduler() {
    return scheduler;
  }

  /** How many scheduled tasks are waiting (not cancelled, not yet run). */
  public int pendingTasks() {
    synchronized (lock) {
      return (int) queue.stream().filter(t -> !t.isCancelled()).count();
    }
  }

  /**
   * Moves time forward by {@code amount}, running every task that falls due on the way.
   *
   * @throws IllegalArgumentException if amount is negative
   */
  public void advance(Duration amount) {
    if (amount.isNegative()) {
      throw new IllegalArgumentException("time only moves forward, but amount was " + amount);
    }
    Instant target = now.plus(amount);
    while (true) {
      Task<?> next;
      synchronized (lock) {
        next = queue.peek();
        if (next == null || next.due.isAfter(target)) {
          break;
        }
        queue.poll();
        if (next.due.isAfter(now)) {
          now = next.due;
        }
      }
      next.runNow();
    }
    now = target;
  }

  private final class ManualClock extends Clock {
    private final ZoneId zone;

    ManualClock(ZoneId zone) {
      this.zone = zone;
    }

    @Override
    public ZoneId getZone() {
      return zone;
    }

    @Override
    public Clock withZone(ZoneId newZone) {
      return new ManualClock(newZone);
    }

    @Override
    public Instant instant() {
      return now;
    }
  }

  private final class Task<V> implements ScheduledFuture<V>, Comparable<Delayed> {
    private final Callable<V> body;
    private final long seq = sequence.incrementAndGet();
    private final long periodMillis;
    private final boolean fixedRate;
    private Instant due;
    private boolean cancelled;
    private boolean done;
    private V result;
    private Throwable failure;

    Task(Callable<V> body, Instant due, long periodMillis, boolean fixedRate) {
      this.body = body;
      this.due = due;
      this.periodMillis = periodMillis;
      this.fixedRate = fixedRate;
    }

    void runNow() {
      synchronized (this) {
        if (cancelled || done) {
          return;
        }
      }
      try {
        V value = body.call();
        if (periodMillis > 0) {
          synchronized (lock) {
            due = (fixedRate ? due : now).plusMillis(periodMillis);
            if (!isCancelled()) {
              queue.add(this);
            }
          }
          return;
        }
        synchronized (this) {
          result = value;
          done = true;
          notifyAll();
        }
      } catch (Exception | Error e) {
        synchronized (this) {
          failure = e;
          done = true;
          notifyAll();
        }
      }
    }

    @Override
    public long getDelay(TimeUnit unit) {
      return unit.convert(Duration.between(now, due).toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public int compareTo(Delayed other) {
      Task<?> o = (Task<?>) other;
      int byDue = due.compareTo(o.due);
      return byDue != 0 ? byDue : Long.compare(seq, o.seq);
    }

    @Override
    public boolean equals(Object o) {
      return this == o;
    }

    @Override
    public int hashCode() {
      return Long.hashCode(seq);
    }

    @Override
    public synchronized boolean cancel(boolean mayInterruptIfRunning) {
      if (done) {
        return false;
      }
      cancelled = true;
      done = true;
      notifyAll();
      synchronized (lock) {
        queue.remove(this);
      }
      return true;
    }

    @Override
    public synchronized boolean isCancelled() {
      return cancelled;
    }

    @Override
    public synchronized boolean isDone() {
      return done;
    }

    @Override
    public synchronized V get() throws InterruptedException, ExecutionException {
      while (!done) {
        wait();
      }
      return outcome();
    }

    @Override
    public synchronized V get(long timeout, TimeUnit unit)
        throws InterruptedException, ExecutionException, TimeoutException {
      long deadline = System.nanoTime() + unit.toNanos(timeout);
      while (!done) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new TimeoutException("task has not run; advance the manual time");
        }
        TimeUnit.NANOSECONDS.timedWait(this, left);
      }
      return outcome();
    }

    private V outcome() throws ExecutionException {
      if (cancelled) {
        throw new CancellationException();
      }
      if (failure != null) {
        throw new ExecutionException(failure);
      }
      return result;
    }
  }

  private final class Scheduler extends AbstractExecutorService
      implements ScheduledExecutorService {
    private volatile boolean shutdown;

    private <V> Task<V> enqueue(
        Callable<V> body, long delay, long period, TimeUnit unit, boolean rate) {
      if (shutdown) {
        throw new RejectedExecutionException("manual scheduler is shut down");
      }
      Task<V> task =
          new Task<>(
              body, now.plusMillis(Math.max(0, unit.toMillis(delay))), unit.toMillis(period), rate);
      synchronized (lock) {
        queue.add(task);
      }
      return task;
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
      return enqueue(asCallable(command), delay, 0, unit, false);
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
      return enqueue(callable, delay, 0, unit, false);
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(
        Runnable command, long initialDelay, long period, TimeUnit unit) {
      requirePositive(period);
      return enqueue(asCallable(command), initialDelay, period, unit, true);
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(
        Runnable command, long initialDelay, long delay, TimeUnit unit) {
      requirePositive(delay);
      return enqueue(asCallable(command), initialDelay, delay, unit, false);
    }

    @Override
    public void execute(Runnable command) {
      schedule(command, 0, TimeUnit.MILLISECONDS);
    }

    @Override
    public void shutdown() {
      shutdown = true;
    }

    @Override
    public List<Runnable> shutdownNow() {
      shutdown = true;
      List<Task<?>> dropped;
      synchronized (lock) {
        dropped = new ArrayList<>(queue);
        queue.clear();
      }
      List<Runnable> pending = new ArrayList<>();
      for (Task<?> t : dropped) {
        pending.add(t::runNow);
      }
      return pending;
    }

    @Override
    public boolean isShutdown() {
      return shutdown;
    }

    @Override
    public boolean isTerminated() {
      return shutdown;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
      return shutdown;
    }

    private static void requirePositive(long period) {
      if (period <= 0) {
        throw new IllegalArgumentException("period must be > 0, but was " + period);
      }
    }

    private static Callable<Object> asCallable(Runnable command) {
      Objects.requireNonNull(command, "command");
      return () -> {
        command.run();
        return null;
      };
    }
  }
}
