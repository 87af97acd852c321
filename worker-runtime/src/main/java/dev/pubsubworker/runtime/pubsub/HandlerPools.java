package dev.pubsubworker.runtime.pubsub;

import com.google.api.gax.core.ExecutorProvider;
import com.google.common.util.concurrent.ThreadFactoryBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The handler threads of one subscription's {@code Subscriber}: an {@link ExecutorProvider} whose
 * every executor (the client asks for one per streaming pull) is a {@link Pool} this object can
 * flush at shutdown.
 *
 * <p>The client hands each received message to its executor as a task that calls our receiver; with
 * every handler thread busy, those tasks wait in the executor's queue: they are the buffered
 * deliveries. {@link #runQueuedOnCaller()} runs each of them at once on the calling thread (where
 * the stopping dispatcher nacks them without running a handler) and makes every later task run on
 * the thread that submits it, so no delivery waits for a handler thread once the worker stops.
 * Thread-safe.
 */
final class HandlerPools implements ExecutorProvider, Executor {

  private final int threads;
  private final String namePrefix;
  private final List<Pool> pools = new CopyOnWriteArrayList<>();
  private final AtomicInteger next = new AtomicInteger();

  /**
   * @param threads handler threads per executor
   * @param namePrefix thread names are this plus a number
   */
  HandlerPools(int threads, String namePrefix) {
    this.threads = threads;
    this.namePrefix = namePrefix;
  }

  @Override
  public boolean shouldAutoClose() {
    return true;
  }

  @Override
  public ScheduledExecutorService getExecutor() {
    Pool pool =
        new Pool(
            threads,
            new ThreadFactoryBuilder().setNameFormat(namePrefix + "%d").setDaemon(true).build());
    pools.add(pool);
    return pool;
  }

  /**
   * Runs {@code task} on one of the handler threads (the executors take turns), behind the
   * deliveries already waiting for one: how a parked delivery's retry, or the next delivery of a
   * key's line, gets a handler thread. Once {@link #runQueuedOnCaller()} ran, it runs on the
   * caller.
   *
   * @throws RejectedExecutionException if the subscriber has no executor (yet, or any more)
   */
  @Override
  public void execute(Runnable task) {
    if (pools.isEmpty()) {
      throw new RejectedExecutionException("no handler executor");
    }
    pools.get(Math.floorMod(next.getAndIncrement(), pools.size())).execute(task);
  }

  /**
   * Runs every queued delivery task now, on the calling thread, and every later one on its
   * submitter's thread.
   *
   * @return how many queued tasks were run
   */
  int runQueuedOnCaller() {
    int ran = 0;
    for (Pool p : pools) {
      ran += p.runQueuedOnCaller();
    }
    return ran;
  }

  /** A handler executor whose queue can be flushed onto the caller. */
  static final class Pool extends ScheduledThreadPoolExecutor {

    private volatile boolean onCaller;

    Pool(int threads, java.util.concurrent.ThreadFactory factory) {
      super(threads, factory);
    }

    @Override
    public void execute(Runnable command) {
      if (onCaller) {
        command.run();
      } else {
        super.execute(command);
      }
    }

    int runQueuedOnCaller() {
      onCaller = true;
      List<Runnable> queued = new ArrayList<>();
      getQueue().drainTo(queued);
      for (Runnable r : queued) {
        r.run();
      }
      return queued.size();
    }
  }
}
