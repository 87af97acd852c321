package dev.pubsubworker.runtime.plugin;

import com.google.inject.Module;
import com.typesafe.config.Config;
import dev.pubsubworker.api.WorkerPlugin;

/**
 * A plugin on the test class path without a service entry: for a jar that names it without
 * containing it, and packed into a jar of its own, for a jar whose classes the class path also has.
 */
public final class ClassPathOnlyPlugin implements WorkerPlugin {
  @Override
  public String name() {
    return "class-path-only";
  }

  @Override
  public Module module(Config config) {
    return binder -> {};
  }
}
