package dev.pubsubworker.runtime.plugin;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Where the compiled folder plugin reports what it saw (it can see the test class path). */
public final class FolderPluginProbe {
  /** Greetings the plugin's handler was built with. */
  public static final List<String> GREETINGS = new CopyOnWriteArrayList<>();

  private FolderPluginProbe() {}
}
