package dev.pubsubworker.runtime.pubsub;

import com.google.api.core.ApiFuture;
import com.google.api.core.InternalApi;
import com.google.api.gax.rpc.ApiException;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Waits for an admin call the way a blocking client method would, except that an interrupt ends the
 * wait: the call is cancelled and {@link CancellationException} thrown. (The clients' blocking
 * methods wait uninterruptibly, through every retry until their total timeout; a stop during
 * start-up must not.)
 */
@InternalApi("the runtime's admin calls and their error text")
public final class AdminCalls {

  private AdminCalls() {}

  /**
   * The text of a Pub/Sub call's failure as an operator reads it: the first line of its message,
   * without the gRPC exception's class name and status code that gax puts in front; empty if none.
   */
  public static String statusText(ApiException e) {
    return e.getMessage() == null
        ? ""
        : e.getMessage()
            .lines()
            .findFirst()
            .orElse("")
            .replaceFirst("^[\\w.$]+(Exception|Error): ", "")
            .replaceFirst("^" + e.getStatusCode().getCode() + ": ", "");
  }

  /**
   * The call's result.
   *
   * @throws com.google.api.gax.rpc.ApiException as the blocking method would
   * @throws CancellationException if the thread was interrupted meanwhile (its flag stays set)
   */
  static <T> T await(ApiFuture<T> call) {
    try {
      return get(call, 0, false);
    } catch (TimeoutException e) {
      throw new IllegalStateException("an unbounded wait timed out", e);
    }
  }

  /**
   * The call's result, waiting at most until {@code deadlineNanos} ({@link System#nanoTime}).
   *
   * @throws TimeoutException once the deadline passed (the call is cancelled)
   * @throws com.google.api.gax.rpc.ApiException as the blocking method would
   * @throws CancellationException if the thread was interrupted meanwhile (its flag stays set)
   */
  static <T> T await(ApiFuture<T> call, long deadlineNanos) throws TimeoutException {
    return get(call, deadlineNanos, true);
  }

  private static <T> T get(ApiFuture<T> call, long deadlineNanos, boolean bounded)
      throws TimeoutException {
    try {
      return bounded
          ? call.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS)
          : call.get();
    } catch (TimeoutException e) {
      call.cancel(true);
      throw e;
    } catch (InterruptedException e) {
      call.cancel(true);
      Thread.currentThread().interrupt();
      CancellationException cancelled = new CancellationException("interrupted");
      cancelled.initCause(e);
      throw cancelled;
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException r) {
        throw r;
      }
      if (cause instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException(cause);
    }
  }
}
