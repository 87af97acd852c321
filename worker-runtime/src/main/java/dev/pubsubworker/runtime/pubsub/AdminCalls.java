package dev.pubsubworker.runtime.pubsub;

import com.google.api.core.ApiFuture;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;

/**
 * Waits for an admin call the way a blocking client method would, except that an interrupt ends the
 * wait: the call is cancelled and {@link CancellationException} thrown. (The clients' blocking
 * methods wait uninterruptibly, through every retry until their total timeout; a stop during
 * start-up must not.)
 */
final class AdminCalls {

  private AdminCalls() {}

  /**
   * The call's result.
   *
   * @throws com.google.api.gax.rpc.ApiException as the blocking method would
   * @throws CancellationException if the thread was interrupted meanwhile (its flag stays set)
   */
  static <T> T await(ApiFuture<T> call) {
    try {
      return call.get();
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
