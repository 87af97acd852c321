package dev.pubsubworker.spring.boot;

import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the auto-configuration opened for the lock store and nobody else closes (the SQL store's own
 * pool): closed, last opened first, when the context closes, after the store itself.
 */
final class OwnedResources implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(OwnedResources.class);

  private final List<AutoCloseable> open = new ArrayList<>();

  /** Registers {@code resource} to be closed; returns it. */
  synchronized <T extends AutoCloseable> T register(T resource) {
    open.add(resource);
    return resource;
  }

  @Override
  public synchronized void close() {
    for (int i = open.size() - 1; i >= 0; i--) {
      try {
        open.get(i).close();
      } catch (Exception e) {
        log.warn("closing {} failed", open.get(i).getClass().getSimpleName(), e);
      }
    }
    open.clear();
  }
}
