package dev.pubsubworker.runtime.store;

import com.google.api.core.InternalApi;
import java.util.Deque;
import java.util.concurrent.ConcurrentLinkedDeque;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a lock store opened (its backend, a connection pool), registered when it is created and
 * closed, newest first, when the worker or tool stops. A store that was never used opened nothing,
 * so nothing is created just to be closed. Thread-safe.
 */
@InternalApi("what the worker closes at stop")
public final class OpenResources implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(OpenResources.class);

  private final Deque<AutoCloseable> opened = new ConcurrentLinkedDeque<>();

  /** Registers {@code resource} to be closed by {@link #close()}; returns it. */
  <T extends AutoCloseable> T register(T resource) {
    opened.push(resource);
    return resource;
  }

  /** Closes everything registered, newest first; a failure is logged and the rest still closed. */
  @Override
  public void close() {
    AutoCloseable next;
    while ((next = opened.poll()) != null) {
      try {
        next.close();
      } catch (Exception e) {
        log.warn("closing {} failed", next.getClass().getSimpleName(), e);
      }
    }
  }
}
