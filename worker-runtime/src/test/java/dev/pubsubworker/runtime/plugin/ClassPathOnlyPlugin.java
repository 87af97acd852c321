package dev.pubsubworker.runtime.plugin;

import com.google.inject.Module;
import com.typesafe.config.Config;
import dev.pubsubworker.api.WorkerPlugin;

/** A plugin on the test class path only, for a jar that names it without containing it. */
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
